package serve

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobview"
	"github.com/axqua/jobstore/cmd/jobstore/internal/remedy"
)

// DefaultAddr is where serve listens without --addr.
const DefaultAddr = "127.0.0.1:7878"

// Timeouts of the HTTP server: the headers of a request must arrive
// within HeaderTimeout and its body within ReadTimeout; an
// answer (but an event stream, whose every write has its own deadline)
// must be written within WriteTimeout.
const (
	HeaderTimeout = 5 * time.Second
	ReadTimeout   = 30 * time.Second
	WriteTimeout  = 30 * time.Second
	IdleTimeout   = 2 * time.Minute
	ShutdownWait  = 5 * time.Second
)

// Options are what "jobstore serve" is told: ROOT and its flags, and
// where its lines go.
type Options struct {
	Root      string
	Addr      string    // HOST:PORT to listen on (port 0: a free one)
	ReadOnly  bool      // show no action, refuse every POST
	TokenFile string    // the token is its first line; "": a random token
	Stdout    io.Writer // the address to open, then "serving" and "stopped serving"
	Stderr    io.Writer // the warning of an address beyond this machine
}

// Run serves opts.Root until ctx ends: it prints the address to open
// (with the token) as its first line on opts.Stdout, and "stopped serving
// ROOT" once the server is shut down. It returns nil when ctx ended it, or
// why it could not serve (ROOT unreadable, the address in use, a bad
// token file).
func Run(ctx context.Context, opts Options) error {
	root := opts.Root
	if _, err := jobview.RootJobDirs("serve", root); err != nil {
		return err
	}
	token, err := serveToken(opts.TokenFile)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return remedy.WithCLIRemedy(&jobstore.Error{Op: "listen", Path: opts.Addr, Msg: "cannot listen", Err: err},
			"give another --addr, or port 0 for a free one")
	}
	defer ln.Close()
	s, err := newServer(ctx, serverConfig{root: root, token: token, readOnly: opts.ReadOnly, port: portOf(ln.Addr())})
	if err != nil {
		return err
	}
	if err := s.waitSynced(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	host := ln.Addr().(*net.TCPAddr)
	fmt.Fprintf(opts.Stdout, "http://%s/?token=%s\n", host.String(), token)
	mode := ""
	if opts.ReadOnly {
		mode = " (read-only)"
	}
	fmt.Fprintf(opts.Stdout, "serving %s%s; Ctrl-C stops\n", root, mode)
	if !host.IP.IsLoopback() {
		fmt.Fprintf(opts.Stderr, "jobstore serve: listening on %s, beyond this machine: the token travels in clear text (no TLS)\n", host)
	}
	hs := &http.Server{Handler: s.handler(), ReadHeaderTimeout: HeaderTimeout, ReadTimeout: ReadTimeout,
		IdleTimeout: IdleTimeout, MaxHeaderBytes: 64 << 10}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err := <-served:
		s.close()
		return err
	case <-ctx.Done():
	}
	s.close()
	sctx, cancel := context.WithTimeout(context.Background(), ShutdownWait)
	defer cancel()
	hs.Shutdown(sctx)
	fmt.Fprintf(opts.Stdout, "stopped serving %s\n", root)
	return nil
}

// portOf is the port of a TCP address.
func portOf(a net.Addr) int {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.Port
	}
	return 0
}

// serveToken is the first line of file, or a new random token.
func serveToken(file string) (string, error) {
	if file == "" {
		b := make([]byte, 24)
		rand.Read(b)
		return hex.EncodeToString(b), nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return "", remedy.WithCLIRemedy(err, "give a file that holds the token on its first line")
	}
	tok, _, _ := strings.Cut(string(data), "\n")
	tok = strings.TrimSpace(tok)
	if len(tok) < 16 || strings.ContainsAny(tok, " \t\r\"';,") {
		return "", &remedy.UsageError{Msg: fmt.Sprintf("--token-file %s: the first line must be a token of at least 16 characters, without blanks, quotes, ';' or ','", file)}
	}
	return tok, nil
}

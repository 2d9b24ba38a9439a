package serve

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/axqua/jobstore"
)

// This file is serve's HTTP server: its routes, and what every request
// goes through first (the token, the security headers, the write
// deadline).

// serverConfig is what a server serves and how.
type serverConfig struct {
	root     string
	token    string
	readOnly bool
	port     int           // names the token's cookie (cookies do not tell ports apart)
	poll     time.Duration // WatchRoot's poll (0: the default)
}

// server serves one root.
type server struct {
	cfg       serverConfig
	cookie    string // the token's cookie
	key       []byte // signs the pages' CSRF tokens
	table     *jobTable
	hub       *eventHub
	pages     *template.Template
	done      chan struct{} // closed by close: event streams end
	closeOnce sync.Once
	stop      context.CancelFunc
}

// newServer starts following cfg.root with WatchRoot; close releases it.
func newServer(ctx context.Context, cfg serverConfig) (*server, error) {
	ctx, stop := context.WithCancel(ctx)
	var opts []jobstore.WatchOption
	if cfg.poll > 0 {
		opts = append(opts, jobstore.WithPollInterval(cfg.poll))
	}
	updates, err := jobstore.WatchRoot(ctx, cfg.root, opts...)
	if err != nil {
		stop()
		return nil, err
	}
	key := make([]byte, 32)
	rand.Read(key)
	hub := newEventHub()
	s := &server{cfg: cfg, cookie: fmt.Sprintf("jobstore_token_%d", cfg.port), key: key,
		table: newJobTable(cfg.root, hub), hub: hub, pages: parsePages(), done: make(chan struct{}), stop: stop}
	s.table.metrics.reg.MustRegister(newTableCollector(s.table, hub, s.table.metrics.started))
	go s.table.follow(ctx, updates)
	return s, nil
}

// close ends the event streams and the WatchRoot.
func (s *server) close() {
	s.closeOnce.Do(func() {
		close(s.done)
		s.stop()
	})
}

// waitSynced returns when every job of the first look at the root is in
// the table, or with ctx's error.
func (s *server) waitSynced(ctx context.Context) error {
	select {
	case <-s.table.syncedCh:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// handler is the server's routes behind its guard.
func (s *server) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.rootPage)
	mux.HandleFunc("GET /jobs/{id}", s.jobPage)
	mux.HandleFunc("GET /jobs/{id}/log", s.jobLog)
	mux.HandleFunc("POST /jobs/{id}/{action}", s.jobAction)
	mux.HandleFunc("POST /bulk/{action}", s.bulkAction)
	mux.HandleFunc("GET /kinds", s.kindsPageHandler)
	mux.HandleFunc("GET /api/rows", s.apiRows)
	mux.HandleFunc("GET /api/kinds", s.apiKinds)
	mux.HandleFunc("GET /api/jobs", s.apiJobs)
	mux.HandleFunc("GET /api/jobs/{id}", s.apiJob)
	mux.HandleFunc("GET /events", func(w http.ResponseWriter, r *http.Request) {
		s.serveEvents(w, r, r.URL.Query().Get("job"))
	})
	mux.Handle("GET /metrics", s.metricsHandler())
	mux.Handle("GET /static/", http.StripPrefix("/static/", staticFiles()))
	return s.guard(mux)
}

// contentSecurityPolicy lets a page load its script and style from the
// server alone, and nothing inline.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// guard answers 401 to a request without the token, sets the security
// headers, and gives every answer but an event stream a write deadline.
func (s *server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "same-origin") // "no-referrer" makes a form's Origin "null"
		h.Set("Cache-Control", "no-store")
		fromQuery, ok := s.authorized(r)
		if !ok {
			http.Error(w, "401 unauthorized: open the address jobstore serve printed, with its ?token=", http.StatusUnauthorized)
			return
		}
		if fromQuery && r.Method == http.MethodGet && isPage(r.URL.Path) {
			// The token becomes a cookie, and leaves the address bar.
			http.SetCookie(w, &http.Cookie{Name: s.cookie, Value: s.cfg.token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
			q := r.URL.Query()
			q.Del("token")
			u := url.URL{Path: r.URL.Path, RawQuery: q.Encode()}
			http.Redirect(w, r, u.String(), http.StatusSeeOther)
			return
		}
		if r.URL.Path != "/events" {
			http.NewResponseController(w).SetWriteDeadline(time.Now().Add(WriteTimeout))
		}
		next.ServeHTTP(w, r)
	})
}

// isPage reports whether path is one of the HTML pages.
func isPage(path string) bool {
	return path == "/" || path == "/kinds" || (strings.HasPrefix(path, "/jobs/") && strings.Count(path, "/") == 2)
}

// authorized reports whether r carries the token, and whether it came as
// ?token=.
func (s *server) authorized(r *http.Request) (fromQuery, ok bool) {
	if tok := r.URL.Query().Get("token"); tok != "" {
		return true, s.isToken(tok)
	}
	if auth, found := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); found {
		return false, s.isToken(strings.TrimSpace(auth))
	}
	if c, err := r.Cookie(s.cookie); err == nil {
		return false, s.isToken(c.Value)
	}
	return false, false
}

func (s *server) isToken(tok string) bool {
	return subtle.ConstantTimeCompare([]byte(tok), []byte(s.cfg.token)) == 1
}

// jobDir is the job directory that id names under the root, if it is a
// directory there (not a link to one); ok false otherwise: an ID that is
// not valid (".." and "a/b" included) names nothing.
func (s *server) jobDir(id string) (jobstore.JobDir, bool) {
	if jobstore.ValidateJobID(id) != nil {
		return "", false
	}
	dir := jobstore.JobDir(filepath.Join(s.cfg.root, id))
	fi, err := os.Lstat(string(dir))
	if err != nil || !fi.IsDir() {
		return "", false
	}
	return dir, true
}

// notFound answers 404 for a job that is not there.
func notFound(w http.ResponseWriter) {
	http.Error(w, "404 no such job under this root", http.StatusNotFound)
}

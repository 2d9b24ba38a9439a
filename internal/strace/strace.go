// Package strace reads the logs of `strace -f -qq -o FILE`, just enough for
// jobstore's own protocol and power-loss tests: one line per call,
// "PID name(args) = ret", with "<unfinished ...>" / "<... name resumed>"
// pairs merged and signal, exit and detach lines skipped. Resolve then keeps
// the calls that touch one directory tree and replaces file descriptors by
// the paths they were opened with.
//
// It is internal: only the jobstore module's tests use it. The calls it
// knows are Linux's (openat, renameat2, newfstatat...); the parser itself
// is plain text handling and builds everywhere.
package strace

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// Call is one completed system call.
type Call struct {
	PID   int
	Name  string
	Args  []string // as strace printed them, split at top-level commas
	Ret   int64    // the return value; -1 on error or when strace printed "?"
	Errno string   // "ENOENT", or "?" when the result is unknown; "" on success
	Line  string   // the whole (merged) line, for messages
}

// OK reports whether the call succeeded (strace printed no errno and no "?").
func (c Call) OK() bool { return c.Errno == "" }

// Parse parses a whole log written with -f (every line starts with a pid).
// A line it cannot read is an error naming the line, never skipped: a test
// that silently lost a call could pass on a broken protocol.
func Parse(log string) ([]Call, error) {
	var calls []Call
	unfinished := map[int]string{} // pid -> the line's text before " <unfinished ...>"
	for n, line := range strings.Split(log, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		pid, rest, err := splitPID(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n+1, err)
		}
		switch {
		case strings.HasPrefix(rest, "---"), strings.HasPrefix(rest, "+++"):
			continue // a signal or an exit
		case strings.HasSuffix(rest, " <detached ...>"):
			continue // a thread that ended inside a call strace could not name
		case strings.HasSuffix(rest, " <unfinished ...>"):
			unfinished[pid] = strings.TrimSuffix(rest, " <unfinished ...>")
			continue
		case strings.HasPrefix(rest, "<... "):
			i := strings.Index(rest, " resumed>")
			head, ok := unfinished[pid]
			if i < 0 || !ok {
				return nil, fmt.Errorf("line %d: resumed call without its start: %q", n+1, line)
			}
			delete(unfinished, pid)
			rest = head + rest[i+len(" resumed>"):]
		}
		c, err := parseCall(rest)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n+1, err)
		}
		c.PID = pid
		calls = append(calls, c)
	}
	return calls, nil
}

func splitPID(line string) (int, string, error) {
	f, rest, _ := strings.Cut(line, " ")
	pid, err := strconv.Atoi(f)
	if err != nil {
		return 0, "", fmt.Errorf("no pid at the start of %q (run strace with -f)", line)
	}
	return pid, strings.TrimLeft(rest, " "), nil
}

// parseCall parses "name(args) = ret [ERRNO (text)]".
func parseCall(s string) (Call, error) {
	c := Call{Line: s, Ret: -1}
	open := strings.IndexByte(s, '(')
	if open <= 0 {
		return c, fmt.Errorf("not a call: %q", s)
	}
	c.Name = s[:open]
	args, rest, err := splitArgs(s[open+1:])
	if err != nil {
		return c, fmt.Errorf("%w in %q", err, s)
	}
	c.Args = args
	rest = strings.TrimSpace(rest)
	if !strings.HasPrefix(rest, "= ") {
		return c, fmt.Errorf("no result in %q", s)
	}
	fields := strings.Fields(rest[2:])
	if len(fields) == 0 {
		return c, fmt.Errorf("no result in %q", s)
	}
	if fields[0] == "?" {
		c.Errno = "?"
		return c, nil
	}
	if c.Ret, err = strconv.ParseInt(fields[0], 0, 64); err != nil {
		return c, fmt.Errorf("result %q in %q", fields[0], s)
	}
	if c.Ret < 0 {
		if len(fields) < 2 {
			return c, fmt.Errorf("no errno in %q", s)
		}
		c.Errno = fields[1]
	}
	return c, nil
}

// splitArgs splits s, the text after a call's '(', at its top-level commas,
// up to the matching ')'; rest is what follows that ')'. Commas inside
// strings, {structs} and [arrays] do not split.
func splitArgs(s string) (args []string, rest string, err error) {
	depth, start, inString := 0, 0, false
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; {
		case inString && ch == '\\':
			i++
		case ch == '"':
			inString = !inString
		case inString:
		case ch == '{' || ch == '[' || ch == '(':
			depth++
		case (ch == '}' || ch == ']') && depth > 0:
			depth--
		case ch == ')' && depth > 0:
			depth--
		case ch == ')':
			if a := strings.TrimSpace(s[start:i]); a != "" || len(args) > 0 {
				args = append(args, a)
			}
			return args, s[i+1:], nil
		case ch == ',' && depth == 0:
			args = append(args, strings.TrimSpace(s[start:i]))
			start = i + 1
		}
	}
	return nil, "", fmt.Errorf("unbalanced argument list")
}

// unquote decodes a string argument ("a\nb\0"...): C escapes, octal
// and \x hex. truncated reports strace's "..." (the string was longer than -s).
func unquote(arg string) (s string, truncated bool, err error) {
	if len(arg) < 2 || arg[0] != '"' {
		return "", false, fmt.Errorf("not a string argument: %q", arg)
	}
	var b strings.Builder
	for i := 1; i < len(arg); i++ {
		ch := arg[i]
		switch {
		case ch == '"':
			tail := arg[i+1:]
			if tail != "" && tail != "..." {
				return "", false, fmt.Errorf("text after the string: %q", arg)
			}
			return b.String(), tail == "...", nil
		case ch != '\\':
			b.WriteByte(ch)
			continue
		}
		i++
		if i >= len(arg) {
			break
		}
		switch e := arg[i]; e {
		case 'n', 't', 'r', 'v', 'f', 'a', 'b':
			b.WriteByte(map[byte]byte{'n': '\n', 't': '\t', 'r': '\r', 'v': '\v', 'f': '\f', 'a': '\a', 'b': '\b'}[e])
		case 'x':
			if i+2 >= len(arg) {
				return "", false, fmt.Errorf("short \\x escape in %q", arg)
			}
			v, err := strconv.ParseUint(arg[i+1:i+3], 16, 8)
			if err != nil {
				return "", false, fmt.Errorf("bad \\x escape in %q", arg)
			}
			b.WriteByte(byte(v))
			i += 2
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(arg) && j < i+3 && arg[j] >= '0' && arg[j] <= '7' {
				j++
			}
			v, _ := strconv.ParseUint(arg[i:j], 8, 8)
			b.WriteByte(byte(v))
			i = j - 1
		default: // \" and \\
			b.WriteByte(e)
		}
	}
	return "", false, fmt.Errorf("unterminated string: %q", arg)
}

// Event is a call resolved against the tree under study: the paths it
// acts on, with file descriptors replaced by the path they were opened with.
type Event struct {
	Call
	Path    string // the path acted on: named, or the fd's (write, fsync, close, fchmod)
	NewPath string // renameat, renameat2, linkat: the new name
	FD      int    // the fd acted on or returned by openat; -1 if none
	Flags   string // openat, renameat2, unlinkat, linkat flags
	Data    []byte // write, pwrite64
	Offset  int64  // pwrite64: the offset; ftruncate: the length
}

// Resolve keeps the calls that touch the tree under root (a path in it,
// an fd opened on such a path, or a path through such an fd's
// /proc/self/fd/N link) and resolves their fds. Everything else
// (the Go runtime reading /proc and /sys, its eventfd wake-ups) is noise.
// The log must be of one process (threads share its fd table).
func Resolve(calls []Call, root string) ([]Event, error) {
	root = filepath.Clean(root)
	inRoot := func(p string) bool { return p == root || strings.HasPrefix(p, root+string(filepath.Separator)) }
	fds := map[int]string{}
	var events []Event
	path := func(c Call, dirArg, pathArg int) (string, error) {
		p, _, err := unquote(c.Args[pathArg])
		if fd, rest, ok := procFD(p); err == nil && ok {
			if fds[fd] == "" {
				return filepath.Clean(p), nil // a descriptor outside root
			}
			return filepath.Join(fds[fd], rest), nil
		}
		if err != nil || filepath.IsAbs(p) {
			return filepath.Clean(p), err
		}
		if dirArg >= 0 && c.Args[dirArg] != "AT_FDCWD" {
			fd, err := strconv.Atoi(c.Args[dirArg])
			if err != nil {
				return "", fmt.Errorf("dirfd %q in %q", c.Args[dirArg], c.Line)
			}
			return filepath.Join(fds[fd], p), nil
		}
		return "", fmt.Errorf("relative path in %q: use absolute paths in traced code", c.Line)
	}
	fdArg := func(c Call) (int, error) {
		fd, err := strconv.Atoi(c.Args[0])
		if err != nil {
			return 0, fmt.Errorf("fd %q in %q", c.Args[0], c.Line)
		}
		return fd, nil
	}
	for _, c := range calls {
		ev := Event{Call: c, FD: -1}
		var err error
		need := map[string]int{"openat": 3, "mkdirat": 3, "mkdir": 2, "unlinkat": 3, "newfstatat": 4, "fchmodat": 3,
			"renameat": 4, "renameat2": 5, "linkat": 5, "write": 3, "pwrite64": 4, "fsync": 1, "fdatasync": 1,
			"close": 1, "fstat": 2, "fchmod": 2, "ftruncate": 2}[c.Name]
		if len(c.Args) < need {
			return nil, fmt.Errorf("%d arguments, want %d: %q", len(c.Args), need, c.Line)
		}
		switch c.Name {
		case "openat":
			ev.Path, err = path(c, 0, 1)
			ev.Flags = c.Args[2]
			if c.OK() {
				ev.FD = int(c.Ret)
				delete(fds, ev.FD)
				if inRoot(ev.Path) {
					fds[ev.FD] = ev.Path
				}
			}
		case "mkdirat", "unlinkat", "newfstatat", "fchmodat":
			ev.Path, err = path(c, 0, 1)
			if c.Name == "unlinkat" {
				ev.Flags = c.Args[2]
			}
		case "mkdir":
			ev.Path, err = path(c, -1, 0)
		case "renameat", "renameat2", "linkat":
			if ev.Path, err = path(c, 0, 1); err == nil {
				ev.NewPath, err = path(c, 2, 3)
			}
			if len(c.Args) > 4 {
				ev.Flags = c.Args[4]
			}
		case "write", "pwrite64", "fsync", "fdatasync", "close", "fchmod", "ftruncate", "fstat":
			if ev.FD, err = fdArg(c); err != nil {
				break
			}
			ev.Path = fds[ev.FD]
			if c.Name == "close" {
				delete(fds, ev.FD)
			}
			if ev.Path == "" {
				continue // an fd outside root
			}
			switch c.Name {
			case "write", "pwrite64":
				var s string
				var truncated bool
				if s, truncated, err = unquote(c.Args[1]); err == nil && truncated {
					err = fmt.Errorf("strace cut the data short (raise -s): %q", c.Line)
				}
				ev.Data = []byte(s)
				if c.OK() && int(c.Ret) < len(ev.Data) {
					ev.Data = ev.Data[:c.Ret] // a short write
				}
				if c.Name == "pwrite64" && err == nil {
					ev.Offset, err = strconv.ParseInt(c.Args[3], 0, 64)
				}
			case "ftruncate":
				ev.Offset, err = strconv.ParseInt(c.Args[1], 0, 64)
			}
		default:
			return nil, fmt.Errorf("no rule for %s: %q", c.Name, c.Line)
		}
		if err != nil {
			return nil, err
		}
		if inRoot(ev.Path) || (ev.NewPath != "" && inRoot(ev.NewPath)) {
			events = append(events, ev)
		}
	}
	return events, nil
}

// procFD splits a path through the process's own descriptor links,
// /proc/self/fd/N/rest (or /proc/thread-self/fd/N/rest), which the kernel
// resolves to the file open at N, not by a name: N and rest.
func procFD(p string) (fd int, rest string, ok bool) {
	for _, prefix := range []string{"/proc/self/fd/", "/proc/thread-self/fd/"} {
		if after, found := strings.CutPrefix(p, prefix); found {
			n, rest, _ := strings.Cut(after, "/")
			fd, err := strconv.Atoi(n)
			return fd, rest, err == nil && fd >= 0
		}
	}
	return 0, "", false
}

// HasFlag reports whether a strace flag set ("O_RDWR|O_CREAT") holds flag.
func HasFlag(flags, flag string) bool {
	for _, f := range strings.Split(flags, "|") {
		if f == flag {
			return true
		}
	}
	return false
}

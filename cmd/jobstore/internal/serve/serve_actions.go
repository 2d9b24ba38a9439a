package serve

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobview"
	"github.com/axqua/jobstore/cmd/jobstore/internal/remedy"
	"github.com/axqua/jobstore/cmd/jobstore/internal/termtext"
)

// This file is the job page's actions: cancel, retry and remove, each a
// POST that needs the token (as every request) and the page's CSRF token,
// which names the job, and refused by --read-only.

// csrfToken is a new CSRF token for a page of job id: a random nonce and
// its HMAC with the server's key over the job's ID. It is good for any
// action on that job, from this server, until it stops.
func (s *server) csrfToken(id string) string { return s.scopedCSRF("job\x00" + id) }

// listCSRF is a new CSRF token for the root's page: good for the bulk
// actions and for an action on any job, from this server, until it stops.
func (s *server) listCSRF() string { return s.scopedCSRF("list") }

func (s *server) scopedCSRF(scope string) string {
	nonce := make([]byte, 16)
	rand.Read(nonce)
	n := hex.EncodeToString(nonce)
	return n + "." + s.csrfMAC(scope, n)
}

func (s *server) csrfMAC(scope, nonce string) string {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(scope + "\x00" + nonce))
	return hex.EncodeToString(m.Sum(nil))
}

// validCSRF reports whether tok is a CSRF token this server made for job
// id, or for the root's page.
func (s *server) validCSRF(id, tok string) bool {
	return s.validScoped("job\x00"+id, tok) || s.validScoped("list", tok)
}

// validScoped reports whether tok is a CSRF token this server made for
// scope.
func (s *server) validScoped(scope, tok string) bool {
	nonce, mac, ok := strings.Cut(tok, ".")
	if !ok || len(nonce) != 32 {
		return false
	}
	return hmac.Equal([]byte(mac), []byte(s.csrfMAC(scope, nonce)))
}

// maxFormBytes bounds an action's request body.
const maxFormBytes = 4 << 10

// messageView is the page that says why an action was refused.
type messageView struct {
	Title, Message, Back string
}

func (s *server) refuse(w http.ResponseWriter, code int, title, msg, back string) {
	w.WriteHeader(code)
	s.render(w, "message.html", messageView{title, msg, back})
}

// mayChange reports whether r may change anything: not when the server is
// --read-only or r comes from another site, which it answers (403, with a
// link to back).
func (s *server) mayChange(w http.ResponseWriter, r *http.Request, back string) bool {
	if s.cfg.readOnly {
		s.refuse(w, http.StatusForbidden, "read-only", "this server was started with --read-only: it changes nothing", back)
		return false
	}
	if !sameOrigin(r) {
		s.refuse(w, http.StatusForbidden, "refused", "the request comes from another site", back)
		return false
	}
	return true
}

func (s *server) jobAction(w http.ResponseWriter, r *http.Request) {
	id, action := r.PathValue("id"), r.PathValue("action")
	back := "/jobs/" + url.PathEscape(id)
	if !s.mayChange(w, r, back) {
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil || !s.validCSRF(id, r.PostForm.Get("csrf")) {
		s.refuse(w, http.StatusForbidden, "refused", "the form's CSRF token is missing or wrong: reload the job's page and try again", back)
		return
	}
	dir, ok := s.jobDir(id)
	if !ok {
		notFound(w)
		return
	}
	var err error
	// After an action: the job's page, which keeps its way back to the
	// list it came from ("list"), or a row's list ("back"); after a
	// removal, that list.
	next := back + "?done=" + action
	list := "/"
	if l, ok := listAddress(r.PostForm.Get("list")); ok {
		list = l
		if l != "/" {
			next = withQuery(back, "done", action, "back", l)
		}
	}
	if l, ok := listAddress(r.PostForm.Get("back")); ok {
		back, list = l, l
		next = withQuery(l, "done", action, "id", id)
	}
	switch action {
	case "cancel":
		err = jobstore.RequestCancel(dir, jobstore.CancelRequest{RequestedAt: jobstore.Now(),
			RequestedBy: "jobstore serve (" + jobview.Requester() + ")", Reason: "cancelled from the web page"})
	case "remove":
		err = jobstore.Remove(dir)
		next = withQuery(list, "done", "removed", "id", id)
	case "retry":
		err = jobstore.Retry(dir)
	default:
		notFound(w)
		return
	}
	if err != nil {
		code := http.StatusInternalServerError
		if errors.Is(err, jobstore.ErrWrongState) || errors.Is(err, jobstore.ErrInvalid) || errors.Is(err, jobstore.ErrLocked) {
			code = http.StatusConflict
		}
		s.refuse(w, code, action+" failed", termtext.OneLine(remedy.ErrorLine(err)), back)
		return
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// sameOrigin reports whether r comes from a page of this server, as far
// as the browser tells (Sec-Fetch-Site, Origin); a request that tells
// nothing (a script) is let through: it has the token and the CSRF token.
func sameOrigin(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		return false
	}
	if o := r.Header.Get("Origin"); o != "" && o != "http://"+r.Host {
		return false
	}
	return true
}

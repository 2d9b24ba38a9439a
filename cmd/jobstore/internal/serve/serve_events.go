package serve

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/axqua/jobstore/cmd/jobstore/internal/remedy"
	"github.com/axqua/jobstore/cmd/jobstore/internal/termtext"
)

// This file is serve's server-sent events: what the table publishes
// reaches each connected page through a bounded buffer of its own. A
// page that does not keep up loses what does not fit and is told to
// load its rows again ("resync"): no client ever holds up the table or
// another client.

// eventHub hands every published event to the clients that want it.
type eventHub struct {
	mu      sync.Mutex
	clients map[*eventClient]struct{}
	dropped atomic.Uint64 // events dropped for clients that did not keep up
}

// eventBuffer is how many events a client may be behind before it is
// told to resync.
const eventBuffer = 256

// Timing of an event stream: each write must be done within
// eventWriteTimeout or the client is dropped; a comment is sent every
// eventKeepAlive so that proxies and the page know the stream is alive.
const (
	eventWriteTimeout = 10 * time.Second
	eventKeepAlive    = 15 * time.Second
)

// eventClient is one event stream.
type eventClient struct {
	job    string      // only this job's events (and none of the root's); "": all
	ch     chan []byte // the events, as written on the stream
	wake   chan struct{}
	behind atomic.Bool // events were dropped: the page must load again
}

func newEventHub() *eventHub { return &eventHub{clients: map[*eventClient]struct{}{}} }

func (h *eventHub) add(job string) *eventClient {
	c := &eventClient{job: job, ch: make(chan []byte, eventBuffer), wake: make(chan struct{}, 1)}
	h.mu.Lock()
	h.clients[c] = struct{}{}
	h.mu.Unlock()
	return c
}

func (h *eventHub) remove(c *eventClient) {
	h.mu.Lock()
	delete(h.clients, c)
	h.mu.Unlock()
}

// count is the number of connected clients.
func (h *eventHub) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.clients)
}

// publish sends msg to every client that wants it: about job ("" for an
// event about the root as a whole, which job pages do not get). It never
// blocks: a client whose buffer is full loses msg and is marked behind.
func (h *eventHub) publish(msg []byte, job string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for c := range h.clients {
		if c.job != "" && c.job != job {
			continue
		}
		select {
		case c.ch <- msg:
		default:
			h.dropped.Add(1)
			c.behind.Store(true)
			select {
			case c.wake <- struct{}{}:
			default:
			}
		}
	}
}

// event is one server-sent event: its name and its data as JSON.
func event(name string, data any) []byte {
	b, err := json.Marshal(data)
	if err != nil {
		b = []byte("{}")
	}
	return fmt.Appendf(nil, "event: %s\ndata: %s\n\n", name, b)
}

func jobEvent(r pageRow, added bool) []byte {
	return event("job", struct {
		Row   pageRow `json:"row"`
		Added bool    `json:"added"`
	}{r, added})
}

func removedEvent(id string) []byte {
	return event("removed", struct {
		ID string `json:"id"`
	}{id})
}

func countsEvent(counts map[string]int) []byte { return event("counts", counts) }

func rootEvent(err error) []byte {
	msg := ""
	if err != nil {
		msg = termtext.OneLine(remedy.ErrorLine(err))
	}
	return event("root", struct {
		Error string `json:"error"`
	}{msg})
}

// resyncEvent tells a page that events were lost: load the rows again.
var resyncEvent = []byte("event: resync\ndata: {}\n\n")

// serveEvents streams events to one client until it goes away or a write
// does not finish within eventWriteTimeout. Each write has its own
// deadline (the server's WriteTimeout does not apply to a stream).
func (s *server) serveEvents(w http.ResponseWriter, r *http.Request, job string) {
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	c := s.hub.add(job)
	defer s.hub.remove(c)
	write := func(b []byte) bool {
		if err := rc.SetWriteDeadline(time.Now().Add(eventWriteTimeout)); err != nil {
			return false
		}
		if _, err := w.Write(b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	w.WriteHeader(http.StatusOK)
	if !write([]byte(": jobstore events\nretry: 1000\n\n")) {
		return
	}
	// A job's page learns the job as it is now, whatever changed between
	// the page and its stream (the root's page loads its rows again).
	if dir, ok := s.jobDir(job); ok && job != "" {
		if j := s.table.job(dir); j != nil && !write(jobEvent(newPageRow(j.Entry(), j), false)) {
			return
		}
	}
	keep := time.NewTicker(eventKeepAlive)
	defer keep.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-s.done:
			return
		case msg := <-c.ch:
			if !write(msg) {
				return
			}
		case <-c.wake:
		case <-keep.C:
			if !write([]byte(": keep-alive\n\n")) {
				return
			}
		}
		if c.behind.Swap(false) {
			for len(c.ch) > 0 { // stale: the page loads the rows again
				<-c.ch
			}
			if !write(resyncEvent) {
				return
			}
		}
	}
}

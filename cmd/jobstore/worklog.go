package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
)

// logger is the Worker's logger for "jobstore work": what goes wrong in
// the Worker itself (an end it could not record, a rescue that failed) is
// said on stderr, as the worker's other notes are; its starts and ends
// are the worker's own lines already, and are not repeated.
func (wk *worker) logger() *slog.Logger { return slog.New(warnHandler{wk: wk}) }

// warnHandler is a slog.Handler that prints records of level Warn and
// above as one note each (worker.warnf), with their attributes.
type warnHandler struct {
	wk    *worker
	attrs []slog.Attr
}

func (h warnHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }

func (h warnHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Message == "started" || r.Message == "ended" {
		return nil // a job's start and end: the worker's own lines say them (a failed end at Warn too)
	}
	var b strings.Builder
	b.WriteString(r.Message)
	add := func(a slog.Attr) bool {
		if a.Key != "root" { // the root the user gave
			fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		}
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(add)
	h.wk.warnf("%s", b.String())
	return nil
}

func (h warnHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return warnHandler{wk: h.wk, attrs: append(append([]slog.Attr(nil), h.attrs...), as...)}
}

func (h warnHandler) WithGroup(string) slog.Handler { return h }

package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestRowLabels_OnePerRowAndDistinct(t *testing.T) {
	c := config{batch: 100, parallel: 8}
	seen := map[string]row{}
	for r := range rowCount {
		l := r.label(c)
		if l == "" {
			t.Errorf("row %d has no label", r)
		}
		if other, ok := seen[l]; ok {
			t.Errorf("rows %d and %d are both labelled %q", other, r, l)
		}
		seen[l] = r
	}
}

func TestPrint_ShowsTheMachinesCPURows(t *testing.T) {
	c := config{jobs: 10, rounds: 1, batch: 100, parallel: 8}
	r := &results{systems: []*systemResults{{name: "jobstore"}}}
	js := r.systems[0]
	for _, p := range []bool{false, true} {
		rows := drainRowsFor(p)
		js.add(rows.machineCPU, 1234)
		js.add(rows.busy, 73.5)
	}
	var b bytes.Buffer
	r.print(&b, c)
	for _, want := range []string{
		"| CPU per job, drain at 8: the machine, kernel threads included (µs) | 1234 |",
		"| the machine's CPUs busy, drain at 8 (% of their time) | 73.5 |",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the table has no line %q:\n%s", want, b.String())
		}
	}
}

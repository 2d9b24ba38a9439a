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

// TestPrint_ComparesTheFloorsWithWorkToThePeers: a floor+D is measured
// against the peers as jobstore and floor are, and the table says what it
// is.
func TestPrint_ComparesTheFloorsWithWorkToThePeers(t *testing.T) {
	c := config{jobs: 10, rounds: 1, batch: 100, parallel: 8}
	r := &results{}
	for _, name := range []string{"jobstore", "floor", "floor+1ms", "river"} {
		r.systems = append(r.systems, &systemResults{name: name})
	}
	bases, peers := r.split()
	var names []string
	for _, b := range bases {
		names = append(names, b.name)
	}
	if got, want := strings.Join(names, ","), "jobstore,floor,floor+1ms"; got != want {
		t.Errorf("bases = %s, want %s", got, want)
	}
	if len(peers) != 1 || peers[0].name != "river" {
		t.Errorf("peers = %v, want river alone", peers)
	}
	var b bytes.Buffer
	r.print(&b, c)
	for _, want := range []string{"| floor+1ms / river |", "\nfloor+D: floor whose drained jobs each spend D of one CPU"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the table has no %q:\n%s", want, b.String())
		}
	}
}

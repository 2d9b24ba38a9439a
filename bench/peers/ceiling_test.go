package main

import (
	"errors"
	"math"
	"sync"
	"testing"
	"time"
)

func TestCeiling_SerialFsyncsAddUp(t *testing.T) {
	tests := []struct {
		name        string
		files, dirs int
		rates       diskRates
		want        float64
	}{
		{"files alone", 2, 0, diskRates{fileSync: 100, dirSync: 1}, 50},
		{"dirs alone", 0, 4, diskRates{fileSync: 1, dirSync: 200}, 50},
		{"both", 2, 4, diskRates{fileSync: 100, dirSync: 200}, 25},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ceiling(tt.files, tt.dirs, tt.rates); math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("ceiling(%d, %d, %+v) = %v, want %v", tt.files, tt.dirs, tt.rates, got, tt.want)
			}
		})
	}
}

func TestPercentile_PicksTheSampleAtOrAboveTheRank(t *testing.T) {
	var d []time.Duration
	for i := 100; i >= 1; i-- { // unsorted on purpose
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	tests := []struct {
		q    float64
		want time.Duration
	}{
		{0.50, 51 * time.Millisecond},
		{0.99, 100 * time.Millisecond},
		{1.00, 100 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(time.Duration(tt.q*100).String(), func(t *testing.T) {
			if got := percentile(d, tt.q); got != tt.want {
				t.Errorf("percentile(q=%v) = %v, want %v", tt.q, got, tt.want)
			}
		})
	}
	if d[0] != 100*time.Millisecond {
		t.Errorf("percentile sorted its caller's slice")
	}
}

func TestRateAtOnce_RunsEveryWriterAndReportsTheirSum(t *testing.T) {
	var mu sync.Mutex
	calls := map[int]int{}
	r, err := rateAtOnce(50*time.Millisecond, 3, func(i int) (func() error, error) {
		return func() error {
			mu.Lock()
			calls[i]++
			mu.Unlock()
			time.Sleep(time.Millisecond)
			return nil
		}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for i := range 3 {
		if calls[i] == 0 {
			t.Errorf("writer %d never ran", i)
		}
		total += calls[i]
	}
	// The rate is the calls of all writers over one elapsed time, which is
	// at least the 50 ms asked for.
	if r <= 0 || r > float64(total)/0.050 {
		t.Errorf("rate %v for %d calls in at least 50 ms", r, total)
	}

	broken := errors.New("broken")
	if _, err := rateAtOnce(100*time.Millisecond, 2, func(i int) (func() error, error) {
		return func() error {
			if i == 1 {
				return broken
			}
			return nil
		}, nil
	}); !errors.Is(err, broken) {
		t.Errorf("a failing writer's error was not returned: %v", err)
	}
}

func TestMedianDisk_TakesEachRateAlone(t *testing.T) {
	got := medianDisk([]diskRates{
		{fileSync: 3, dirSync: 10, layout: 5, runAtOnce: 9},
		{fileSync: 1, dirSync: 30, layout: 4, runAtOnce: 7},
		{fileSync: 2, dirSync: 20, layout: 6, runAtOnce: 8},
	})
	want := diskRates{fileSync: 2, dirSync: 20, layout: 5, runAtOnce: 8}
	if got != want {
		t.Errorf("medianDisk = %+v, want %+v", got, want)
	}
}

func TestPerRound_DividesRoundByRound(t *testing.T) {
	s := &systemResults{name: "x"}
	for _, v := range [][2]float64{{100, 300}, {200, 500}, {0, 10}} {
		s.add(rowDrain1, v[0])
		s.add(rowDrainN, v[1])
	}
	got := s.perRound(rowDrainN, rowDrain1)
	want := []float64{3, 2.5} // a round with no drain at 1 is left out
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("perRound = %v, want %v", got, want)
	}
	if text := withRange(summary(got)); text != "3.00 (2.50–3.00)" {
		t.Errorf("withRange(summary(%v)) = %q", got, text)
	}
}

package main

import (
	"math"
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

//go:build !linux

package main

import (
	"errors"
	"time"
)

// errNoCPU is what a CPU reading answers where Linux's /proc and getrusage
// are missing: the CPU rows then fail the run rather than read zero.
var errNoCPU = errors.New("CPU time is read from /proc and getrusage, on Linux only")

func selfCPU() (time.Duration, error) { return 0, errNoCPU }

func treeCPU(string, bool) (time.Duration, error) { return 0, errNoCPU }

func machineCPU() (busy, all time.Duration, err error) { return 0, 0, errNoCPU }

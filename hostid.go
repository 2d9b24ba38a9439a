package jobstore

import (
	"fmt"
	"os"
	"unicode"
)

// HostEnv is the environment variable that names this process's host in
// ownership records. Set it when the machine's hostname does not tell hosts
// apart (containers that share one name), or to make two processes on one
// machine act as two hosts (the two-host tests do). A child process inherits
// it.
const HostEnv = "JOBSTORE_HOST"

// maxHostIDLen bounds a host identity; a DNS name fits in 253 bytes.
const maxHostIDLen = 255

// HostID returns the identity this process claims for its host: $JOBSTORE_HOST
// when it is set and not empty, else os.Hostname(), else "" (unknown).
//
// Two processes with the same host identity are taken to share a process
// table only if they also share its pid scope (JobStatus.PIDScope): the
// identity alone never lets one host judge another's pids. An unknown identity ("")
// matches nobody, so a runner with no name is judged by its lease alone.
//
// A value of $JOBSTORE_HOST that is longer than 255 bytes or holds control
// characters is an *Error of kind ErrInvalid, Subject HostEnv.
func HostID() (string, error) {
	if v := os.Getenv(HostEnv); v != "" {
		if err := validateHostID(v); err != nil {
			return "", err
		}
		return v, nil
	}
	h, err := os.Hostname()
	if err != nil || validateHostID(h) != nil {
		return "", nil // unknown: judged by lease, never by pid
	}
	return h, nil
}

func validateHostID(id string) error {
	bad := func(msg string) error {
		return errInvalid("host identity", "", invalid{subject: HostEnv, found: id, supported: "1-255 bytes without control characters", msg: msg, remedy: "set " + HostEnv + " to a short name for this host (or unset it to use the hostname)"})
	}
	if len(id) > maxHostIDLen {
		return bad(fmt.Sprintf("is %d bytes long, more than %d", len(id), maxHostIDLen))
	}
	for i, r := range id {
		if unicode.IsControl(r) || r == unicode.ReplacementChar {
			return bad(fmt.Sprintf("has the character %q at byte %d", r, i))
		}
	}
	return nil
}

package jobstore_test

import (
	"os"
	"strings"
	"testing"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/require"
)

func TestHostID(t *testing.T) {
	hostname, _ := os.Hostname()
	for _, tc := range []struct {
		name, env, want string
		bad             bool
	}{
		{"unset: the hostname", "", hostname, false},
		{"set", "hostA", "hostA", false},
		{"control character", "host\nA", "", true},
		{"too long", strings.Repeat("h", 256), "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(jobstore.HostEnv, tc.env)
			got, err := jobstore.HostID()
			if tc.bad {
				require.ErrorIs(t, err, jobstore.ErrInvalid)
				require.Contains(t, err.Error(), jobstore.HostEnv)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

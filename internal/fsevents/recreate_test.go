//go:build unix || windows

package fsevents

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSubscribe_DirectoryMadeAgainUnderItsSubscriberIsWatchedAgain: a
// watched directory removed (or moved away, or replaced by a rename) and
// made again under the same path is watched again, and its subscriber
// hears changes in the new directory by events; a directory moved away is
// not reported under its old path any more. Each way, with the parent
// watched by someone else and without.
func TestSubscribe_DirectoryMadeAgainUnderItsSubscriberIsWatchedAgain(t *testing.T) {
	requireRepairs(t)
	for _, how := range []string{"removed", "moved-away", "replaced-by-rename"} {
		for _, parentWatched := range []bool{false, true} {
			name := how
			if parentWatched {
				name += "/parent-watched"
			}
			t.Run(name, func(t *testing.T) {
				root := newDir(t)
				dir := filepath.Join(root, "j1")
				require.NoError(t, os.Mkdir(dir, 0o755))
				if parentWatched {
					mustSubscribe(t, root, nil, NewSink())
				}
				sink := NewSink()
				mustSubscribe(t, dir, []string{"cancel.json"}, sink)

				switch how {
				case "removed":
					require.NoError(t, os.RemoveAll(dir))
					waitFor(t, sink, Change{dir, ""})
					waitHeld(t, root) // the slow path: gone when the hub looked
					waitRepaired(t)
					sink.Take(nil)
					require.NoError(t, os.Mkdir(dir, 0o755))
				case "moved-away":
					require.NoError(t, os.Rename(dir, dir+".old"))
					waitFor(t, sink, Change{dir, ""})
					waitHeld(t, root)
					waitRepaired(t)
					publish(t, dir+".old", "cancel.json", "{}") // not dir's any more
					mustNotSee(t, sink, Change{dir, "cancel.json"})
					sink.Take(nil)
					require.NoError(t, os.Mkdir(dir, 0o755))
				case "replaced-by-rename":
					// No event of dir's own precedes the new directory when
					// the parent is watched: the rename's Create tells.
					require.NoError(t, os.Mkdir(dir+".new", 0o755))
					require.NoError(t, syscall.Rename(dir+".new", dir)) // os.Rename refuses a directory target
				}
				// The new directory reported, then watched: a subscriber looks
				// after each Change "" (a file made in between is found by
				// that look); this one publishes after the second.
				waitFor(t, sink, Change{dir, ""})
				waitRepaired(t)
				publish(t, dir, "cancel.json", "{}")
				waitFor(t, sink, Change{dir, "cancel.json"})
			})
		}
	}
}

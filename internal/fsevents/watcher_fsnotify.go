//go:build !windows

package fsevents

import "github.com/fsnotify/fsnotify"

// osWatcher is the hub's OS watcher: fsnotify's (inotify, kqueue).
type osWatcher = fsnotify.Watcher

func newOSWatcher() (*osWatcher, error) { return fsnotify.NewWatcher() }

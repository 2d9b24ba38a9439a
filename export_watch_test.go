package jobstore

// WithoutEvents turns file system events off in Watch, leaving the safety
// poll alone, as on a filesystem that gives none.
func WithoutEvents() WatchOption { return withoutEvents() }

// WatchedDirs is how many directories the process's shared OS watcher
// watches, and whether it exists at all.
func WatchedDirs() (dirs int, exists bool) {
	events.mu.Lock()
	defer events.mu.Unlock()
	if events.hub == nil {
		return 0, false
	}
	events.hub.mu.Lock()
	defer events.hub.mu.Unlock()
	return len(events.hub.dirs), true
}

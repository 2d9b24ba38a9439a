package jobstore

// WithoutNextEvents turns file system events off in StartNext, leaving its
// scan alone, as on a filesystem that gives none.
func WithoutNextEvents() StartOption {
	return func(o *startOptions) { o.next.noEvents = true }
}

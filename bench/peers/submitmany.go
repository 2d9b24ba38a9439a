package main

import "github.com/axqua/jobstore"

// jobstoreSubmitMany is jobstore's batch submit, or nil where the library
// has none: the batched enqueue of jobstore is then reported as n/a. With
// a library that has SubmitMany, this returns jobstore.SubmitMany.
func jobstoreSubmitMany() func(root string, specs []jobstore.JobSpec) ([]jobstore.JobDir, error) {
	return nil
}

// Package jobmetrics is the Prometheus series of jobs that both "jobstore
// serve" and "jobstore work --metrics" export: starts, ends by state, run
// times and queue waits by kind (docs/cli.md lists them).
package jobmetrics

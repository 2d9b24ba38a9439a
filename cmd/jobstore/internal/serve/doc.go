// Package serve is "jobstore serve": a web page of the jobs under a root,
// kept current from jobstore.WatchRoot, a JSON API and Prometheus metrics,
// behind a token (Run). The pages' templates and static files are
// embedded from web/.
package serve

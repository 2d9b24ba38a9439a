// Package schematest holds the tests of the JSON Schemas in docs/schema/
// (job.json, status.json, index.json and cancel.json): the schemas accept
// every record jobstore writes (a whole lifecycle, cancel requests from
// RequestCancel) and every fixture it reads, refuse what jobstore's decoders
// refuse where a schema can say so (job ID rules included), keep their
// shared definitions identical, and Python's jsonschema gives the same
// verdicts as the Go validator.
//
// It is a module of its own (with a replace to the root) so that the JSON
// Schema validator and its dependencies are needed by these tests only,
// never by jobstore's importers. Run it with
//
//	(cd internal/schematest && go test ./...)
package schematest

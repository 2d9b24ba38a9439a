// Package schematest holds the tests of the JSON Schemas in docs/schema/:
// the schemas accept every record jobstore writes and every fixture it
// reads, refuse what jobstore's decoders refuse where a schema can say so,
// and Python's jsonschema gives the same verdicts as the Go validator.
//
// It is a module of its own (with a replace to the root) so that the JSON
// Schema validator and its dependencies are needed by these tests only,
// never by jobstore's importers. Run it with
//
//	(cd internal/schematest && go test ./...)
package schematest

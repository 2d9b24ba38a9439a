module github.com/axqua/jobstore/internal/schematest

go 1.25.0

require (
	github.com/axqua/jobstore v0.0.0
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	github.com/stretchr/testify v1.12.1
)

require (
	github.com/fsnotify/fsnotify v1.10.1 // indirect
	github.com/google/renameio/v2 v2.0.2 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.47.0 // indirect
	golang.org/x/text v0.14.0 // indirect
)

replace github.com/axqua/jobstore => ../..

module github.com/agenttest/agenttest

go 1.26.0

require (
	github.com/jstemmer/go-junit-report/v2 v2.1.0
	github.com/sergi/go-diff v1.4.0
	go.yaml.in/yaml/v3 v3.0.6
	golang.org/x/sync v0.24.0
)

require github.com/stretchr/testify v1.8.2 // indirect

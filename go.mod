module github.com/agenttest/agenttest

go 1.26.0

require (
	github.com/chromedp/cdproto v0.159.0
	github.com/chromedp/chromedp v0.23.0
	github.com/coder/websocket v1.8.15
	github.com/cucumber/gherkin/go/v26 v26.2.0
	github.com/cucumber/godog v0.15.1
	github.com/cucumber/messages/go/v21 v21.0.1
	github.com/jstemmer/go-junit-report/v2 v2.1.0
	github.com/sergi/go-diff v1.4.0
	go.yaml.in/yaml/v3 v3.0.6
	golang.org/x/sync v0.24.0
)

require (
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	github.com/gofrs/uuid v4.3.1+incompatible // indirect
	github.com/hashicorp/go-immutable-radix v1.3.1 // indirect
	github.com/hashicorp/go-memdb v1.3.4 // indirect
	github.com/hashicorp/golang-lru v0.5.4 // indirect
	github.com/spf13/pflag v1.0.7 // indirect
)

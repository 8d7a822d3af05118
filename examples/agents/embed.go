// Package agents carries the example agent definitions inside the binary,
// so the embedded simulator serves them with no files on disk. The format
// is described in docs/agent-definition.md.
package agents

import "embed"

// FS holds every example agent definition (*.yaml) of this directory.
//
//go:embed *.yaml
var FS embed.FS

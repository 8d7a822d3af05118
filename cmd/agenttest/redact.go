package main

import (
	"fmt"

	"github.com/agenttest/agenttest/internal/config"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/scenario"
	"github.com/agenttest/agenttest/internal/secret"
)

// keyRedactor is the redactor of a target's keys, for what the command
// prints itself (errors, the console safety net). The platform client and
// the runner mask keys in every value before it is stored, so reports are
// written from clean values and never filtered as a byte stream, which
// could corrupt their structure.
func keyRedactor(t *config.Target) (*secret.Redactor, error) {
	r, err := secret.New(t.Secrets()...)
	if err != nil {
		// Resolve refused such keys already.
		return nil, fmt.Errorf("target %s: %w", t.Name, err)
	}
	return r, nil
}

// keyReferences refuses the ${env:NAME} references of suites that read a
// variable holding an API key (AGENTTEST_BUILD_KEY, AGENTTEST_RUNTIME_KEY,
// or one a key setting of agenttest.yaml names): the key would be sent as
// user text, compared in expectations and printed in failures. The client
// authenticates every call itself; a suite never needs a key.
func keyReferences(suites []*scenario.Suite, cfg *config.File) diag.Diagnostics {
	vars := config.KeyVariables(cfg)
	var ds diag.Diagnostics
	for _, s := range suites {
		for _, ref := range s.EnvRefs {
			holds, ok := vars[ref.Name]
			if !ok {
				continue
			}
			d := diag.Diagnostic{Pos: ref.Pos,
				Message: fmt.Sprintf("${env:%s} reads %s, which holds %s: a suite may not read an API key", ref.Name, ref.Name, holds),
				Hint:    "remove the reference: agenttest sends the key in the headers of every call, and nowhere else"}
			if ref.Name == config.EnvWebhookSecret {
				d.Message = fmt.Sprintf("${env:%s} reads %s, which holds %s: a suite may not read a secret", ref.Name, ref.Name, holds)
				d.Hint = "remove the reference: agenttest verifies the platform's deliveries with it, and sends it nowhere"
			}
			ds = ds.Append(d)
		}
	}
	ds.Sort()
	return ds
}

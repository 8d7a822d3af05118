package main

import (
	"fmt"
	"slices"

	"github.com/agenttest/agenttest/internal/config"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/scenario"
	"github.com/agenttest/agenttest/internal/secret"
)

// commandRedactor is the redactor of the values a command masks in
// everything it prints and writes: the target's keys and tokens, the
// keys the environment holds for any target (envKeys: a run on the
// embedded simulator beside the job's AGENTTEST_BUILD_KEY), the webhook
// signing secret, whether the command was given it (webhookSecret, from
// --webhook-secret or --secret) or only has it in its environment, as a
// job that sets it for every step does, and the
// credentials of the webhook URL it registers (webhookURL: a proxy's
// password in front of the receiver, a ?token= the receiver checks). A
// platform knows them all, and one that echoes them must not put them
// into reports. A value too short to mask is left out: a command that
// uses a secret that short refused it already (checkWebhookSecret), one
// that does not has nothing to leak, and a URL's is masked wherever the
// URL is shown (platform.RedactURL).
//
// It is the one redactor of the command: what the command prints itself
// (errors, the console safety net), the platform client
// (platform.Config.Redactor) and the runner mask with it, in every value
// before it is stored, so reports are written from clean values and
// never filtered as a byte stream, which could corrupt their structure.
// A secret the command learns on the way (the signing secret of the
// endpoint it registers, learnSigningSecret) is masked by all of them
// from then on.
func commandRedactor(st *State, cfg *config.File, t *config.Target, webhookSecret, webhookURL string) (*secret.Redactor, error) {
	out := t.Secrets()
	// The environment's keys, whatever target they are for: a run on the
	// embedded simulator sends its keys, and the job's AGENTTEST_BUILD_KEY,
	// or the variable agenttest.yaml names for another target's key, is
	// no less the platform's.
	extra := append(envKeys(st, cfg), webhookSecret)
	for _, s := range secret.Maskable(append(extra, platform.URLCredentials(webhookURL)...)...) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	r, err := secret.New(out...)
	if err != nil {
		// Resolve refused such keys already.
		return nil, fmt.Errorf("target %s: %w", t.Name, err)
	}
	if st.MaskLog != nil {
		st.MaskLog(r)
	}
	return r, nil
}

// checkWebhookSecret is the problem of a webhook signing secret given to
// a command (flag names the flag), if any: one too short to be told apart
// from ordinary text could not be masked in the outputs.
func checkWebhookSecret(flag, s string) []string {
	if s == "" {
		return nil
	}
	if err := secret.CheckKey(flag, s); err != nil {
		return []string{err.Error()}
	}
	return nil
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

// keysInNames refuses the suite paths and names, scenario names and tags
// that hold a key the environment holds (envKeys): the console, every
// report, the CI annotations and list print them as they are, since
// compare, history and --rerun-failed match cases across runs on them,
// and a mask would make two names one. The diagnostics say where, their
// echoed lines masked.
func keysInNames(st *State, suites []*scenario.Suite, cfg *config.File) diag.Diagnostics {
	red := knownKeys(st, cfg)
	if red.Empty() {
		return nil
	}
	const hint = "take the key out: names and tags are printed as they are, on the console, in every report and by list"
	var ds diag.Diagnostics
	seen := map[diag.Pos]bool{}
	for _, su := range suites {
		// A file's path is a case's identity as its name is (the
		// reports, --rerun-failed and the gate's --suite match on it):
		// refused, not masked.
		if red.Contains(su.Path) {
			ds = ds.Append(diag.Diagnostic{Pos: su.Pos, Message: "the suite's file path holds a key the environment holds",
				Hint: "take the key out of the path: paths are printed as they are, in every report and by list"})
		}
		if red.Contains(su.Name) {
			ds = ds.Append(diag.Diagnostic{Pos: su.Pos, Message: "the suite's name holds a key the environment holds", Hint: hint})
		}
		for _, sc := range su.Scenarios {
			what := ""
			switch {
			case red.Contains(sc.Name):
				what = "name holds"
			case slices.ContainsFunc(sc.Tags, red.Contains):
				what = "tags hold"
			}
			if what != "" && !seen[sc.Pos] {
				seen[sc.Pos] = true
				ds = ds.Append(diag.Diagnostic{Pos: sc.Pos, Message: "the scenario's " + what + " a key the environment holds", Hint: hint})
			}
		}
	}
	return ds
}

// learnSigningSecret makes the command's redactor mask the signing secret
// of the webhook endpoint it registered: the platform issued it, so the
// redactor was not built with it, and a platform that echoes it later
// must not put it into any output. One too short to be told apart from
// ordinary text is refused, as checkWebhookSecret refuses such a secret
// given to the command.
func learnSigningSecret(red *secret.Redactor, s string) error {
	return red.Learn("the signing secret the platform issued for the webhook endpoint", s)
}

// maskMessage masks the keys the workspace holds (workspaceKeys: the
// environment's, and those of the variables the command's config file
// keeps keys in: the one --config gave it (State.config), else the file
// AGENTTEST_CONFIG names, else agenttest.yaml) in the message of the
// error a command ends with. A message quotes the values it refuses, and a value
// the environment gives by mistake (a key pasted into AGENTTEST_RATE or
// AGENTTEST_SHARD) or a report read (an edited status, schema or value)
// was quoted as it was, before any redactor of the command was built.
// The exit code and the hint (agenttest's own words) are the error's.
func maskMessage(st *State, err error) error { return workspaceKeys(st, st.config).Error(err) }

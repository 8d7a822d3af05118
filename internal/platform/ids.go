package platform

import (
	"fmt"
	"regexp"
	"strings"
)

// The identifier forms of the reference ("Identifiers in paths"): a
// workspace is a slug from the studio console URL or ws- and 8 characters;
// an agent (project) is a slug or PROJECT- and 8 characters. The reference
// does not define the slug alphabet; letters, digits, '-' and '_' cover
// every slug seen and keep '/' and '?' out of paths. These are the only
// copies of the rules on the client side: the config loader reports their
// errors at the file position of the value.
var (
	accountPrefixed = regexp.MustCompile(`^ws-[A-Za-z0-9]{8}$`)
	agentPrefixed   = regexp.MustCompile(`^PROJECT-[A-Za-z0-9]{8}$`)
	idSlug          = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$`)
	idUUID          = regexp.MustCompile(`^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$`)
)

// CheckAccountID reports whether id is a workspace id the platform
// accepts. The obsolete ACCOUNT- prefix is refused with the form to use.
func CheckAccountID(id string) error {
	switch {
	case len(id) >= 8 && strings.EqualFold(id[:8], "ACCOUNT-"):
		return fmt.Errorf("account id %q: the ACCOUNT- prefix is obsolete; use the workspace id in the form ws-XXXXXXXX (or the slug from the studio console URL)", id)
	case strings.HasPrefix(id, "ws-"):
		if !accountPrefixed.MatchString(id) {
			return fmt.Errorf("account id %q: the prefixed form is ws- followed by 8 letters or digits", id)
		}
	case !idSlug.MatchString(id):
		return fmt.Errorf("account id %q: expected ws-XXXXXXXX or a slug of letters, digits, '-' and '_'", id)
	}
	return nil
}

// AgentIDForm names the form of an agent id a platform's answer gives
// (a Messaging joined event, an SMS or call answer), so that it is held
// to the scenario's agent only when both are written alike: "prefixed"
// (PROJECT-XXXXXXXX), "slug", or "uuid" for the canonical 8-4-4-4-12 hex
// form, which is a slug by the alphabet but is how a platform writes an
// internal id no designer types; "" for anything else, which names the
// agent in no form the reference has. Two ids of different forms (or an
// unknown one) may name the same agent: nothing can be said of them.
// A display name in a slug's form (clinic_bot) sent where the id goes
// is a slug, another agent's to any reader: docs/configuration.md says
// why it is held to the scenario's agent.
func AgentIDForm(id string) string {
	switch {
	case agentPrefixed.MatchString(id):
		return "prefixed"
	case idUUID.MatchString(id):
		return "uuid"
	case idSlug.MatchString(id):
		return "slug"
	}
	return ""
}

// CheckAgentID reports whether id is an agent (project) id the platform
// accepts: a slug or PROJECT-XXXXXXXX.
func CheckAgentID(id string) error {
	switch {
	case strings.HasPrefix(id, "PROJECT-"):
		if !agentPrefixed.MatchString(id) {
			return fmt.Errorf("agent id %q: the prefixed form is PROJECT- followed by 8 letters or digits", id)
		}
	case !idSlug.MatchString(id):
		return fmt.Errorf("agent id %q: expected PROJECT-XXXXXXXX or a slug of letters, digits, '-' and '_'", id)
	}
	return nil
}

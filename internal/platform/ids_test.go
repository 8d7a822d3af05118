package platform

import (
	"strings"
	"testing"
)

func TestCheckIDs(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name  string
		check func(string) error
		id    string
		// want is a part of the error, or "" when the id is valid.
		want string
	}
	run := func(t *testing.T, tc testCase) {
		err := tc.check(tc.id)
		switch {
		case tc.want == "" && err != nil:
			t.Fatalf("%q: unexpected error %v", tc.id, err)
		case tc.want != "" && err == nil:
			t.Fatalf("%q: accepted, want an error containing %q", tc.id, tc.want)
		case tc.want != "" && !strings.Contains(err.Error(), tc.want):
			t.Fatalf("%q: error %q, want it to contain %q", tc.id, err, tc.want)
		}
	}
	for _, tc := range []testCase{
		{"workspace prefixed", CheckAccountID, "ws-a1B2c3D4", ""},
		{"workspace slug", CheckAccountID, "acme-health_eu", ""},
		{"workspace prefix too short", CheckAccountID, "ws-abc", "ws- followed by 8"},
		{"obsolete ACCOUNT- prefix names the ws- form", CheckAccountID, "ACCOUNT-12345678", "ws-XXXXXXXX"},
		{"obsolete prefix in lower case", CheckAccountID, "account-12345678", "obsolete"},
		{"slash in a workspace", CheckAccountID, "acme/eu", "slug"},
		{"empty workspace", CheckAccountID, "", "slug"},
		{"the bare obsolete prefix", CheckAccountID, "ACCOUNT-", "obsolete"},
		{"workspace prefix too long", CheckAccountID, "ws-a1B2c3D4e", "ws- followed by 8"},
		{"underscore in a prefixed workspace", CheckAccountID, "ws-a1B2_3D4", "ws- followed by 8"},
		{"slug of 128", CheckAccountID, strings.Repeat("a", 128), ""},
		{"slug of 129", CheckAccountID, strings.Repeat("a", 129), "slug"},
		{"slug starting with a dash", CheckAccountID, "-acme", "slug"},
		{"agent prefix too short", CheckAgentID, "PROJECT-0a1b2c3", "PROJECT- followed by 8"},
		{"agent slug starting with an underscore", CheckAgentID, "_billing", "slug"},
		{"agent prefixed", CheckAgentID, "PROJECT-0a1b2c3d", ""},
		{"agent slug", CheckAgentID, "utility-billing", ""},
		{"agent prefix too long", CheckAgentID, "PROJECT-0a1b2c3d4", "PROJECT- followed by 8"},
		{"space in an agent", CheckAgentID, "My Agent", "slug"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestAgentIDForm: the forms an agent id may come in, which decide
// whether a platform's answer naming an agent can be held to the
// scenario's (runner's elsewhere): a UUID is a slug by its alphabet, but
// no designer's agent id.
func TestAgentIDForm(t *testing.T) {
	t.Parallel()
	for id, want := range map[string]string{
		"PROJECT-0a1b2c3d":                     "prefixed",
		"PROJECT-0a1b2c3":                      "slug", // a slug that begins like the prefixed form
		"billing":                              "slug",
		"utility-billing_2":                    "slug",
		"3f2a9c1e-7b4d-4e0a-9c1f-2b3c4d5e6f70": "uuid",
		"3F2A9C1E-7B4D-4E0A-9C1F-2B3C4D5E6F70": "uuid",
		"3f2a9c1e-7b4d-4e0a-9c1f-2b3c4d5e6f7":  "slug", // one digit short
		"":                                     "",
		"My Agent":                             "",
		"acme/billing":                         "",
	} {
		if got := AgentIDForm(id); got != want {
			t.Errorf("AgentIDForm(%q) = %q, want %q", id, got, want)
		}
	}
}

package brand

import "testing"

func TestNames(t *testing.T) {
	type testCase struct {
		brand               string
		auth, sig, eventWrd string
	}
	run := func(t *testing.T, tc testCase) {
		if got := AuthTokenHeader(tc.brand); got != tc.auth {
			t.Errorf("AuthTokenHeader(%q) = %q, want %q", tc.brand, got, tc.auth)
		}
		if got := SignatureHeader(tc.brand); got != tc.sig {
			t.Errorf("SignatureHeader(%q) = %q, want %q", tc.brand, got, tc.sig)
		}
		if got := EventWord(tc.brand); got != tc.eventWrd {
			t.Errorf("EventWord(%q) = %q, want %q", tc.brand, got, tc.eventWrd)
		}
	}
	for _, tc := range []testCase{
		{"", "X-Vendor-Auth-Token", "X-Vendor-Signature", "VENDOR"},
		{"Vendor", "X-Vendor-Auth-Token", "X-Vendor-Signature", "VENDOR"},
		{"Acme", "X-Acme-Auth-Token", "X-Acme-Signature", "ACME"},
	} {
		t.Run(tc.brand, func(t *testing.T) { run(t, tc) })
	}
}

func TestValidate(t *testing.T) {
	for _, ok := range []string{"", "Vendor", "Acme2"} {
		if err := Validate(ok); err != nil {
			t.Errorf("Validate(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"Ac me", "X-Y", "Acmé", string(make([]byte, 65))} {
		if err := Validate(bad); err == nil {
			t.Errorf("Validate(%q) accepted", bad)
		}
	}
}

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

// TestOfSignatureHeader: a header named as SignatureHeader names one
// gives its brand word back, whatever its case; others give none.
func TestOfSignatureHeader(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		ok         bool
	}{
		{SignatureHeader("Acme"), "Acme", true},
		{SignatureHeader(""), Default, true},
		{"x-acme-signature", "acme", true},
		{"X-Signature", "", false},
		{"X--Signature", "", false},
		{"X-Ac me-Signature", "", false},
		{"X-Acme-Auth-Token", "", false},
		{"Acme-Signature", "", false},
	} {
		if got, ok := OfSignatureHeader(tc.name); got != tc.want && tc.ok || ok != tc.ok {
			t.Errorf("OfSignatureHeader(%q) = %q, %v; want %q, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

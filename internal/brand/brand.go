// Package brand spells the platform's brand word where the reference writes
// "Vendor": in header names (X-Vendor-Auth-Token, X-Vendor-Signature) and in
// messaging event names (EVENT_TYPE_REQUEST_VENDOR_AGENT_JOIN). Both the
// simulator and the client import it, so the two always agree on a header
// name without the client importing the simulator.
//
//	req.Header.Set(brand.AuthTokenHeader(b), key)  // b == "" means Default
package brand

import (
	"fmt"
	"strings"
)

// Default is the brand word of the reference.
const Default = "Vendor"

// TokenIDHeader carries the connector id of the project on SMS calls. It
// holds no brand word.
const TokenIDHeader = "X-TOKEN-ID"

// Word returns b, or Default when b is empty, so that a zero-valued option
// means the reference's spelling.
func Word(b string) string {
	if b == "" {
		return Default
	}
	return b
}

// AuthTokenHeader is the credential header of outbound calling and SMS:
// "X-Vendor-Auth-Token" for the default brand.
func AuthTokenHeader(b string) string { return "X-" + Word(b) + "-Auth-Token" }

// SignatureHeader carries the hex HMAC-SHA256 of a webhook delivery body:
// "X-Vendor-Signature" for the default brand.
func SignatureHeader(b string) string { return "X-" + Word(b) + "-Signature" }

// OfSignatureHeader is the brand word of a header named as SignatureHeader
// names one (X-Acme-Signature: "Acme", any case), and whether name is
// one: a delivery signed under another brand's header says which brand
// the platform is.
func OfSignatureHeader(name string) (string, bool) {
	const pre, suf = "X-", "-Signature"
	if len(name) <= len(pre)+len(suf) || !strings.EqualFold(name[:len(pre)], pre) || !strings.EqualFold(name[len(name)-len(suf):], suf) {
		return "", false
	}
	w := name[len(pre) : len(name)-len(suf)]
	return w, Validate(w) == nil
}

// EventWord is the brand as it appears inside upper-case event names
// ("VENDOR" in EVENT_TYPE_REQUEST_VENDOR_AGENT_JOIN).
func EventWord(b string) string { return strings.ToUpper(Word(b)) }

// Validate reports whether b can stand in a header name: ASCII letters and
// digits only, at most 64 of them. The empty string is valid (Default).
func Validate(b string) error {
	if len(b) > 64 {
		return fmt.Errorf("brand %q is longer than 64 characters", b)
	}
	for _, r := range b {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return fmt.Errorf("brand %q: use ASCII letters and digits only, it goes into header names", b)
		}
	}
	return nil
}

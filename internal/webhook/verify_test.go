package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/sim"
)

const testSecret = "whsec_0123456789abcdef0123456789abcdef"

func TestVerify(t *testing.T) {
	body := []byte(`{"id":"evt_1","type":"conversation.completed","data":{"conversation_id":"c1","environment":"sandbox"}}`)
	// The simulator's signer is an independent implementation of the
	// reference's rule.
	good := sim.Sign(testSecret, body)
	lastChanged := good[:len(good)-1] + "0"
	if lastChanged == good {
		lastChanged = good[:len(good)-1] + "1"
	}
	type testCase struct {
		name      string
		secret    string
		body      []byte
		signature string
		want      error  // nil: valid
		text      string // part of the message
	}
	run := func(t *testing.T, tc testCase) {
		err := Verify(tc.secret, tc.body, tc.signature)
		if tc.want == nil {
			if err != nil {
				t.Fatalf("Verify = %v, want valid", err)
			}
			return
		}
		if !errors.Is(err, tc.want) {
			t.Fatalf("Verify = %v, want %v", err, tc.want)
		}
		if !strings.Contains(err.Error(), tc.text) {
			t.Errorf("message %q does not say %q", err, tc.text)
		}
	}
	for _, tc := range []testCase{
		{name: "valid", secret: testSecret, body: body, signature: good},
		{name: "upper-case hex", secret: testSecret, body: body, signature: strings.ToUpper(good)},
		{name: "sha256= prefix", secret: testSecret, body: body, signature: "sha256=" + good},
		{name: "SHA256= prefix", secret: testSecret, body: body, signature: "SHA256=" + good},
		{name: "surrounding space", secret: testSecret, body: body, signature: " " + good + " "},
		{name: "missing", secret: testSecret, body: body, signature: "", want: ErrNoSignature, text: "missing"},
		{name: "not hex", secret: testSecret, body: body, signature: "zz" + good[2:], want: ErrMalformedSignature, text: "not hexadecimal"},
		{name: "odd length", secret: testSecret, body: body, signature: good[1:], want: ErrMalformedSignature, text: "not hexadecimal"},
		// Nothing after the prefix: the text is read as the digest itself.
		{name: "prefix alone", secret: testSecret, body: body, signature: "sha256=", want: ErrMalformedSignature, text: "not hexadecimal"},
		{name: "short digest", secret: testSecret, body: body, signature: good[:32], want: ErrMalformedSignature, text: "16 bytes, a SHA-256 digest has 32"},
		// Every byte of the digest counts, the last as much as the first.
		{name: "last digit changed", secret: testSecret, body: body, signature: lastChanged, want: ErrSignatureMismatch, text: "mismatch"},
		{name: "wrong secret", secret: "whsec_other", body: body, signature: good, want: ErrSignatureMismatch, text: "mismatch"},
		{name: "tampered body", secret: testSecret, body: []byte(strings.Replace(string(body), "sandbox", "live", 1)), signature: good, want: ErrSignatureMismatch, text: "body was changed"},
		{name: "no secret", secret: "", body: body, signature: good, want: ErrNoSecret, text: "no signing secret"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestSignMatchesHMAC(t *testing.T) {
	body := []byte("any body")
	m := hmac.New(sha256.New, []byte(testSecret))
	m.Write(body)
	if got, want := Sign(testSecret, body), hex.EncodeToString(m.Sum(nil)); got != want {
		t.Fatalf("Sign = %s, want %s", got, want)
	}
	if got := Sign(testSecret, body); got != sim.Sign(testSecret, body) {
		t.Fatalf("Sign and sim.Sign differ")
	}
}

// FuzzVerify checks that no input panics, that the signature of a body
// always verifies, and that verification agrees with an HMAC computed
// here: a signature is accepted only when it decodes to that digest.
func FuzzVerify(f *testing.F) {
	f.Add(testSecret, []byte(`{"type":"conversation.completed","data":{}}`), "")
	f.Add(testSecret, []byte(`{}`), "sha256=00")
	f.Add("s", []byte(""), "zz")
	f.Fuzz(func(t *testing.T, secret string, body []byte, signature string) {
		err := Verify(secret, body, signature)
		if secret == "" {
			if !errors.Is(err, ErrNoSecret) {
				t.Fatalf("empty secret: %v", err)
			}
			return
		}
		if err := Verify(secret, body, Sign(secret, body)); err != nil {
			t.Fatalf("own signature rejected: %v", err)
		}
		if err == nil {
			m := hmac.New(sha256.New, []byte(secret))
			m.Write(body)
			sig := strings.TrimSpace(signature)
			if len(sig) > 7 && strings.EqualFold(sig[:7], "sha256=") {
				sig = sig[7:]
			}
			got, decErr := hex.DecodeString(sig)
			if decErr != nil || !hmac.Equal(got, m.Sum(nil)) {
				t.Fatalf("accepted signature %q that is not the body's HMAC", signature)
			}
		}
	})
}

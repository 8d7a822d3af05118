// Package webhook receives the platform's signed webhook deliveries: it
// verifies each one, keeps the verified events in a bounded store keyed by
// conversation, and lets confirmations wait for an event.
//
//	rcv := webhook.NewReceiver(webhook.Options{Brand: "Vendor"})
//	srv := &http.Server{Handler: rcv}                   // listen first
//	ep, secret, err := webhook.Register(ctx, client, publicURL, webhook.DefaultEvents, "")
//	rcv.SetSecret(secret)
//	ev, err := rcv.Wait(ctx, conversationID, "conversation.completed")
//
// The signature is the reference's: header X-<Brand>-Signature holds the hex
// HMAC-SHA256 of the raw body under the endpoint's signing secret.
package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// Reasons a delivery fails verification. Verify wraps them with detail;
// errors.Is tells them apart.
var (
	// ErrNoSignature: the signature header is absent or empty.
	ErrNoSignature = errors.New("missing signature header")
	// ErrMalformedSignature: the header is not a hex SHA-256 digest.
	ErrMalformedSignature = errors.New("malformed signature")
	// ErrSignatureMismatch: the digest is not the body's under the secret
	// (a wrong secret, or a body changed on the way).
	ErrSignatureMismatch = errors.New("signature mismatch")
	// ErrNoSecret: the receiver has no signing secret yet, so nothing can
	// be verified.
	ErrNoSecret = errors.New("no signing secret configured")
)

// Sign returns the hex HMAC-SHA256 of body under secret: the value of the
// signature header.
func Sign(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// Verify checks signature, the value of the signature header, against body
// under secret. The comparison is constant-time (hmac.Equal on the decoded
// digests). A "sha256=" prefix, which some platforms put before the digest,
// is accepted: the reference shows the bare hex, and the prefix carries no
// secret.
func Verify(secret string, body []byte, signature string) error {
	if secret == "" {
		return ErrNoSecret
	}
	sig := strings.TrimSpace(signature)
	if sig == "" {
		return ErrNoSignature
	}
	if len(sig) > 7 && strings.EqualFold(sig[:7], "sha256=") {
		sig = sig[7:]
	}
	got, err := hex.DecodeString(sig)
	if err != nil {
		return fmt.Errorf("%w: not hexadecimal: %v", ErrMalformedSignature, err)
	}
	if len(got) != sha256.Size {
		return fmt.Errorf("%w: %d bytes, a SHA-256 digest has %d", ErrMalformedSignature, len(got), sha256.Size)
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	if !hmac.Equal(got, m.Sum(nil)) {
		return fmt.Errorf("%w: the body's HMAC-SHA256 under the endpoint's signing secret differs (wrong secret, or the body was changed)", ErrSignatureMismatch)
	}
	return nil
}

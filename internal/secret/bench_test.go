package secret

import (
	"fmt"
	"strings"
	"testing"
)

// The redactor runs over every reply body, so its clean-text scan is on the
// runner's hot path:
//
//	go test -run '^$' -bench . ./internal/secret

// benchReply is a debug-chat reply of the usual size (about 1 KB).
var benchReply = []byte(`{"conversationId":"conv-0c1f7a","userInput":"4 people at 7pm",` +
	`"response":"Great, a table for 4 at 7pm. Shall I book it under your name? Your reference will follow by SMS.",` +
	`"metadata":{"asrLangCode":"en-GB","ttsLangCode":"en-GB","currentNode":"ConfirmBooking",` +
	`"nodeTrace":["Greeting","CollectPartySize","CollectTime","ConfirmBooking"],` +
	`"state":{"party_size":4,"time":"19:00","name":"","notes":"window seat if possible \u00e9"},` +
	`"metrics":{"CALL_TURN":["2026-03-01T12:00:00Z","2026-03-01T12:00:04Z"],"BOOKING_STEP":"confirm"},` +
	`"functionEvents":[{"name":"check_availability","status":"ok","result":{"available":true,"tables":[4,6]}}],` +
	`"retrievedTopics":["opening hours","booking policy"],"llmRequests":[{"model":"m-1","latencyMs":412}]},` +
	`"conversationEnded":false,"delayedResponse":false}`)

func BenchmarkBytesClean(b *testing.B) {
	r := mustNew(b, "sim-build-key-not-a-secret", "sim-runtime-key-not-a-secret")
	b.SetBytes(int64(len(benchReply)))
	for b.Loop() {
		r.Bytes(benchReply)
	}
}

// BenchmarkBytesCleanDerived is the scan of a platform client's
// redactor, derived (Derive) from its command's, which holds a key the
// client does not send: it should cost what New's of the three keys
// does, not what one made by With costs (every start tried).
func BenchmarkBytesCleanDerived(b *testing.B) {
	r, err := mustNew(b, "whsec_command-secret-0123").Derive("sim-build-key-not-a-secret", "sim-runtime-key-not-a-secret")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(benchReply)))
	for b.Loop() {
		r.Bytes(benchReply)
	}
}

func BenchmarkBytesEcho(b *testing.B) {
	key := "sim-build-key-not-a-secret"
	r := mustNew(b, key, "sim-runtime-key-not-a-secret")
	text := []byte(strings.Replace(string(benchReply), "ConfirmBooking", key, 1))
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		r.Bytes(text)
	}
}

func BenchmarkNew(b *testing.B) {
	for b.Loop() {
		mustNew(b, "sim-build-key-not-a-secret", "sim-runtime-key-not-a-secret")
	}
}

// BenchmarkStream redacts a reply streamed a token a chunk as a Stream
// does, and, for comparison, as redacting the whole text at each chunk
// would (what the Messaging client did before Stream): the first grows
// with the chunks, the second with the chunks times the text.
//
//	go test -run '^$' -bench 'Stream' ./internal/secret
func BenchmarkStream(b *testing.B) {
	r := mustNew(b, "sim-build-key-not-a-secret", "sim-runtime-key-not-a-secret")
	for _, n := range []int{10, 100, 1000} {
		chunks := make([]string, n)
		for i := range chunks {
			chunks[i] = fmt.Sprintf("token%d ", i)
		}
		b.Run(fmt.Sprintf("window/%d-chunks", n), func(b *testing.B) {
			for b.Loop() {
				s := r.Stream()
				for _, c := range chunks {
					s.Append(c)
				}
			}
		})
		b.Run(fmt.Sprintf("whole/%d-chunks", n), func(b *testing.B) {
			for b.Loop() {
				text := ""
				for _, c := range chunks {
					text = r.String(text + c)
				}
			}
		})
	}
}

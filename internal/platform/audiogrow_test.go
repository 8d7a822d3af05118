package platform

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// TestAudioDeclaredLengthCostsNothing: a recording's Content-Length is
// the server's word. A hostile server that announces 200 MiB and sends
// a few bytes costs the client what arrived, not what was announced.
// Before, the client grew its buffer to the announced length first: 200
// MiB per read, per case polling the recording, side by side.
// Not parallel: it measures the process's allocations.
func TestAudioDeclaredLengthCostsNothing(t *testing.T) {
	const announced = 200 << 20
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "audio/wav")
		w.Header().Set("Content-Length", strconv.Itoa(announced))
		w.WriteHeader(http.StatusOK)
		w.Write([]byte("RIFF....WAVE"))
		// The handler returns: the connection closes short of the length.
	}))
	t.Cleanup(srv.Close)
	c := newTestClient(t, srv.URL, RetryPolicy{MaxAttempts: 1})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 3 {
		if _, _, err := c.ConversationAudio(context.Background(), "p", "c1"); err == nil {
			t.Fatal("a body cut short of its length was read as a recording")
		}
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 64<<20 {
		t.Errorf("3 reads of a recording that sent 12 bytes allocated %d MiB", got>>20)
	}
}

// TestAudioSizeHoldsToTheLimit: a recording counted rather than kept is
// bounded all the same: one byte past the client's limit for recordings
// is refused as a body over the limit, whatever it announced; at the
// limit it is read to its end and its length is what arrived.
func TestAudioSizeHoldsToTheLimit(t *testing.T) {
	t.Parallel()
	const limit = 1000
	for _, tc := range []struct {
		name    string
		n       int
		wantErr string
	}{
		{name: "at the limit", n: limit},
		{name: "past the limit", n: limit + 1, wantErr: "GET /v3/ws-abcd1234/p/conversations/c1/audio: 200: malformed response: body exceeds the limit of"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "audio/wav")
				// Chunked: no length announced, so only the count can
				// tell the body is over the limit.
				w.(http.Flusher).Flush()
				w.Write(bytes.Repeat([]byte{'a'}, tc.n))
			}))
			t.Cleanup(srv.Close)
			c, err := New(Config{BuildURL: srv.URL, RuntimeURL: srv.URL, AccountID: "ws-abcd1234", MaxAudioBytes: limit, Retry: RetryPolicy{MaxAttempts: 1}})
			if err != nil {
				t.Fatal(err)
			}
			size, ctype, err := c.ConversationAudioSize(context.Background(), "p", "c1")
			switch {
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			case tc.wantErr == "" && (err != nil || size != int64(tc.n) || ctype != "audio/wav"):
				t.Fatalf("%d bytes of %q, %v; want %d of audio/wav", size, ctype, err, tc.n)
			}
		})
	}
}

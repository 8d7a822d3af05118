package platform

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
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

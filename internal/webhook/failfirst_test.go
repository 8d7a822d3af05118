package webhook

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

func TestFailFirst(t *testing.T) {
	var passed []string
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		passed = append(passed, string(b))
		w.WriteHeader(http.StatusNoContent)
	})
	h := FailFirst(next, 2)
	deliver := func(body string) int {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body)))
		return rec.Code
	}
	a := `{"id":"evt_a","type":"conversation.completed"}`
	b := `{"id":"evt_b","type":"handoff.created"}`
	got := []int{deliver(a), deliver(b), deliver(a), deliver(a), deliver(b), deliver(b)}
	want := []int{503, 503, 503, 204, 503, 204}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("statuses = %v, want %v", got, want)
		}
	}
	if len(passed) != 2 || passed[0] != a || passed[1] != b {
		t.Errorf("passed on = %q, want each event once, body intact", passed)
	}
	// A retry is the same event by its id, though its body differs (a
	// platform that counts the attempts in it).
	passed = nil
	retries := []int{deliver(`{"id":"evt_c","attempt":1}`), deliver(`{"id":"evt_c","attempt":2}`), deliver(`{"id":"evt_c","attempt":3}`)}
	if !slices.Equal(retries, []int{503, 503, 204}) || len(passed) != 1 {
		t.Errorf("retries of one event with different bodies: statuses %v, passed on %q; want 503, 503, 204 and the third", retries, passed)
	}
	if FailFirst(next, 0) == nil {
		t.Error("FailFirst(h, 0) must return h")
	}
}

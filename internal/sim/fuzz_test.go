package sim

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"
)

// FuzzDecodeCursor checks that any cursor text is either refused with a
// message or decodes to a position that survives a round trip: clients
// pass cursors back verbatim, and a cursor the server issued must always
// be accepted again.
func FuzzDecodeCursor(f *testing.F) {
	ns, o := int64(1767225600000000000), 3
	for _, s := range []string{
		encodeCursor(cursor{T: &ns, ID: "conv-1"}),
		encodeCursor(cursor{O: &o}),
		"", "null", "e30", "!!!", "eyJ0IjoxLCJvIjoxfQ", "eyJ0IjoxfQ",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := decodeCursor(s)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "malformed cursor") {
				t.Fatalf("error %q does not say the cursor is malformed", err)
			}
			return
		}
		again, err := decodeCursor(encodeCursor(*c))
		if err != nil {
			t.Fatalf("re-encoded cursor of %q refused: %v", s, err)
		}
		if !reflect.DeepEqual(c, again) {
			t.Fatalf("round trip of %q: %#v, then %#v", s, c, again)
		}
	})
}

// FuzzListQuery sends arbitrary query strings to the conversation list of
// every API version over the real handler, with conversations in the store
// so that paging runs. The answer is a page (200) or a 400 whose JSON body
// says what is wrong; never a panic or a 500.
func FuzzListQuery(f *testing.F) {
	for _, q := range []string{
		"", "limit=2", "limit=0", "limit=-1", "limit=99999999999999999999", "offset=3&limit=2",
		"cursor=%ZZ", "cursor=e30", "cursor=eyJvIjoxfQ", "query_type=semantic&query=bill&start_time=2026-01-01T00:00:00Z&end_time=2026-12-31T00:00:00Z",
		"sample=random&query_type=transcript", "client_env=prod", "in_progress=maybe", "variant_id=a&variant_name=b",
		"start_time=yesterday", "channel=WEBCHAT&channel=VOICE-SIP", "limit=1&limit=2", "turn_type=both", "%gh&&=",
	} {
		f.Add(uint8(3), q)
	}
	srv, err := New(Options{Seed: 7, SeedConversations: 40, Now: func() time.Time { return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) }})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(srv.Close)
	h := srv.RuntimeHandler()
	info := srv.Info()
	f.Fuzz(func(t *testing.T, version uint8, rawQuery string) {
		v := []string{"v1", "v2", "v3"}[int(version)%3]
		target := "/" + v + "/" + info.AccountID + "/" + info.AgentIDs[0] + "/conversations"
		req := httptest.NewRequest(http.MethodGet, "http://runtime.test"+target, nil)
		// Set after NewRequest, which would refuse a malformed URL.
		req.URL.RawQuery = rawQuery
		req.Header.Set("x-api-key", info.RuntimeKey)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		switch rec.Code {
		case http.StatusOK:
			var env struct {
				Conversations []json.RawMessage `json:"conversations"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil || env.Conversations == nil {
				t.Fatalf("%s?%s: 200 without a list envelope (%v): %.200s", target, rawQuery, err, rec.Body.Bytes())
			}
		case http.StatusBadRequest:
			var e struct {
				ErrorMessage string `json:"error_message"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.ErrorMessage == "" {
				t.Fatalf("%s?%s: 400 without error_message: %.200s", target, rawQuery, rec.Body.Bytes())
			}
		default:
			t.Fatalf("%s?%s: status %d: %.200s", target, rawQuery, rec.Code, rec.Body.Bytes())
		}
	})
}

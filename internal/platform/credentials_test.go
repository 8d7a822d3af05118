package platform

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// TestCallTokenGoesToCalling: outbound calling sends the call token in
// X-<Brand>-Auth-Token, and the runtime key only when no call token is
// configured, never besides it; a refusal names the credential sent.
func TestCallTokenGoesToCalling(t *testing.T) {
	t.Parallel()
	const callToken = "ct-CALLING-token-0123456789"
	type sent struct{ token, apiKey string }
	for _, tc := range []struct {
		name, callToken string
		want            sent
		credential      string
	}{
		{"call token", callToken, sent{token: callToken}, CredentialCallToken},
		{"no call token", "", sent{token: redirectRuntimeKey}, CredentialRuntimeKeyAsCallToken},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var got []sent
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				got = append(got, sent{r.Header.Get("X-Acme-Auth-Token"), r.Header.Get("X-Api-Key")})
				mu.Unlock()
				http.Error(w, `{"message":"bad token"}`, http.StatusUnauthorized)
			}))
			t.Cleanup(srv.Close)
			c, err := New(Config{BuildURL: srv.URL, RuntimeURL: srv.URL, AccountID: "ws-abcd1234", Brand: "Acme",
				BuildKey: redirectBuildKey, RuntimeKey: redirectRuntimeKey, CallToken: tc.callToken})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.CallStatus(context.Background(), "CA1")
			var ae *APIError
			if !errors.As(err, &ae) || ae.Status != http.StatusUnauthorized || ae.Credential != tc.credential {
				t.Errorf("got %#v, want a 401 naming the %s", err, tc.credential)
			}
			if len(got) != 1 || got[0] != tc.want {
				t.Errorf("the calling endpoint received %+v, want %+v once", got, tc.want)
			}
		})
	}
}

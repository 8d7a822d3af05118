package platform

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// TestMessagingStepAnswerForms: the access-token and session steps
// answer in the forms another implementation of the reference plausibly
// chooses: the reference's snake_case names or camelCase ones (as
// sessionId already was), bare or in a {"data": ...} envelope (with
// success, meta or a request id beside it), as the client reads every
// other record. The socket is then opened with that token and session.
// An answer that names no token or session, or names two different
// ones, stays the step's malformed answer (the platform's error, its
// endpoint and status named), and no socket is tried.
func TestMessagingStepAnswerForms(t *testing.T) {
	t.Parallel()
	const ref = `{"session_id":"s-1"}`
	tok := func(format string) string { return fmt.Sprintf(format, plantedJWT) }
	for _, tc := range []struct {
		name, token, session, want string
		sid                        string // the session the socket is asked for, when not s-1
		jwt                        string // the token sent, when not plantedJWT
	}{
		{"the reference's names", tok(`{"access_token":%q,"token_type":"Bearer"}`), ref, "", "", ""},
		{"camelCase token", tok(`{"accessToken":%q,"expiresIn":3600}`), ref, "", "", ""},
		{"token in data", tok(`{"data":{"access_token":%q}}`), ref, "", "", ""},
		{"token in data beside success", tok(`{"success":true,"data":{"accessToken":%q}}`), ref, "", "", ""},
		{"session in data", tok(`{"access_token":%q}`), `{"data":{"session_id":"s-1","streaming_enabled":false}}`, "", "", ""},
		{"camelCase session in data beside a request id", tok(`{"access_token":%q}`), `{"data":{"sessionId":"s-1"},"request_id":"r-9"}`, "", "", ""},
		{"a session id as a number past 2^53", tok(`{"access_token":%q}`), `{"data":{"session_id":9007199254740993}}`, "", "9007199254740993", ""},
		{"a token as a number past 2^53", `{"access_token":90071992547409930001}`, ref, "", "", "90071992547409930001"},
		{"one token under two names", tok(`{"access_token":%[1]q,"accessToken":%[1]q}`), ref, "", "", ""},

		{"a token under no name the client reads", tok(`{"data":{"jwt":%q}}`), ref,
			`POST /api/v1/access-token: 200: malformed response: no "access_token" string in the answer`, "", ""},
		{"data beside a member of a record is no envelope", tok(`{"data":{"access_token":%q},"user":"u"}`), ref,
			`POST /api/v1/access-token: 200: malformed response: no "access_token" string in the answer`, "", ""},
		{"two tokens", tok(`{"access_token":%q,"accessToken":"eyJhbGciOiJIUzI1NiJ9.e30.b3RoZXI"}`), ref,
			`POST /api/v1/access-token: 200: malformed response: "access_token" and "accessToken" name different tokens`, "", ""},
		{"a token sent twice under one name", tok(`{"access_token":%q,"access_token":"eyJhbGciOiJIUzI1NiJ9.e30.b3RoZXI"}`), ref,
			`POST /api/v1/access-token: 200: malformed response: field "access_token" is sent twice, with different values`, "", ""},
		{"a session sent twice in data", tok(`{"access_token":%q}`), `{"data":{"session_id":"s-1","session_id":"s-2"}}`,
			`POST /api/v1/sessions: 200: malformed response: field "session_id" is sent twice, with different values`, "", ""},
		{"a session sent twice alike", tok(`{"access_token":%q}`), `{"session_id":"s-1","session_id":"s-1"}`, "", "", ""},
		{"a session named id", tok(`{"access_token":%q}`), `{"data":{"id":"s-1"}}`,
			`POST /api/v1/sessions: 200: malformed response: no "session_id" in the answer`, "", ""},
		{"a session answer with trailing data", tok(`{"access_token":%q}`), `{"session_id":"s-1"} {"session_id":"s-2"}`,
			`POST /api/v1/sessions: 200: malformed response: more than one JSON value`, "", ""},
		{"a truncated session answer", tok(`{"access_token":%q}`), `{"session_id":"s-1"`,
			`POST /api/v1/sessions: 200: malformed response: truncated JSON`, "", ""},
		{"a session answer that is a list", tok(`{"access_token":%q}`), `["s-1"]`,
			`POST /api/v1/sessions: 200: malformed response: expected an object, got array`, "", ""},
		{"an empty session answer", tok(`{"access_token":%q}`), ``,
			`POST /api/v1/sessions: 200: malformed response: empty body`, "", ""},
		{"a session in data as a string", tok(`{"access_token":%q}`), `{"data":"s-1"}`,
			`POST /api/v1/sessions: 200: malformed response: no "session_id" in the answer`, "", ""},
		{"two sessions", tok(`{"access_token":%q}`), `{"session_id":"s-1","sessionId":"s-2"}`,
			`POST /api/v1/sessions: 200: malformed response: "session_id" and "sessionId" name different sessions`, "", ""},
		{"a session id of the wrong type", tok(`{"access_token":%q}`), `{"data":{"session_id":{"id":"s-1"}}}`,
			`POST /api/v1/sessions: 200: malformed response: field "session_id": expected a string, got object`, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			jwt := cmp.Or(tc.jwt, plantedJWT)
			shook := make(chan url.Values, 1)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch r.URL.Path {
				case "/api/v1/access-token":
					fmt.Fprint(w, tc.token)
				case "/api/v1/sessions":
					if r.Header.Get("Authorization") != "Bearer "+jwt {
						http.Error(w, `{"error":"Invalid access token"}`, http.StatusUnauthorized)
						return
					}
					fmt.Fprint(w, tc.session)
				default:
					shook <- r.URL.Query()
					http.Error(w, `{"error":"session not found"}`, http.StatusNotFound)
				}
			}))
			defer srv.Close()
			err := openError(plantedMessagingClient(t, srv.URL, RetryPolicy{MaxAttempts: 1}))
			if err == nil {
				t.Fatal("opened a session on a server whose socket is not found")
			}
			if strings.Contains(err.Error(), plantedJWT[strings.LastIndexByte(plantedJWT, '.')+1:]) {
				t.Errorf("the error shows the access token: %v", err)
			}
			if tc.want != "" {
				var re *ResponseError
				if !errors.As(err, &re) || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("got %v (%T), want the platform's malformed answer %q", err, err, tc.want)
				}
				select {
				case q := <-shook:
					t.Errorf("a socket was tried (%v) after a malformed answer", q)
				default:
				}
				return
			}
			select {
			case q := <-shook:
				want := url.Values{"session_id": {cmp.Or(tc.sid, "s-1")}, "access_token": {jwt}}
				if q.Encode() != want.Encode() {
					t.Errorf("handshake query %v, want %v", q, want)
				}
			default:
				t.Fatalf("no socket was tried: %v", err)
			}
		})
	}
}

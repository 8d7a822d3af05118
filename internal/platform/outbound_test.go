package platform

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// TestCallAnswers reads the answers to a placed call and to a status
// read in the forms the reference leaves open (it names call_sid and the
// four statuses, not the other members), and refuses the ones that say
// neither which call nor what status, naming the endpoint and status.
func TestCallAnswers(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name, body string
		status     bool // read a status (else place a call)
		// want is what the answer reads as: the sid, or the sid, status,
		// whether final, conversation and reason; or the error.
		want string
	}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		c := serveFixed(t, &fixed{status: http.StatusOK, body: tc.body})
		var got string
		var err error
		if tc.status {
			var st *CallStatus
			st, err = c.CallStatus(context.Background(), "OUT-1")
			if err == nil {
				got = strings.Join([]string{st.SID, st.Status, map[bool]string{true: "final", false: "open"}[st.Final()], st.ConversationID, st.FailureReason}, " ")
			} else if st.Final() {
				t.Error("a status that could not be read is final")
			}
		} else {
			var call *Call
			call, err = c.PlaceCall(context.Background(), CallRequest{To: "+447700900001"})
			if err == nil {
				got = call.SID
			}
		}
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("read %q\nwant %q", got, tc.want)
		}
	}
	for _, tc := range []testCase{
		{name: "call_sid", body: `{"call_sid":"OUT-1","status":"queued"}`, want: "OUT-1"},
		{name: "callSid", body: `{"callSid":"OUT-2"}`, want: "OUT-2"},
		{name: "sid", body: `{"sid":"OUT-3"}`, want: "OUT-3"},
		{name: "id", body: `{"id":"OUT-4"}`, want: "OUT-4"},
		{name: "no sid", body: `{"status":"queued"}`, want: `POST /v1/outbound-calling: 200: malformed response: missing required field "call_sid"`},
		{name: "status without a sid", status: true, body: `{"status":"calling"}`, want: "OUT-1 calling open  "},
		{name: "status as state", status: true, body: `{"call_sid":"OUT-1","state":"failure","reason":"busy"}`, want: "OUT-1 failure final  busy"},
		{name: "status as call_status", status: true, body: `{"call_sid":"OUT-1","call_status":"success","conversationId":"c1"}`, want: "OUT-1 success final c1 "},
		// Server text a summary and a failure print: one line, its
		// controls escaped, cut as an error body's message is.
		{name: "a reason of many lines", status: true, body: `{"call_sid":"OUT-1","status":"failure","failure_reason":"busy\n\u202e` + strings.Repeat("x", 4000) + `"}`,
			want: "OUT-1 failure final  busy \\u202e" + strings.Repeat("x", 300-len(`busy \u202e`)) + "..."},
		{name: "no status", status: true, body: `{"call_sid":"OUT-1"}`,
			want: `GET /v1/outbound-calling/OUT-1/status: 200: malformed response: missing required field "status"`},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestSMSRefused: a 400 to an SMS or a call placed from a given number
// says the number must be provisioned for the project (the reference
// gives that 400 to the group of both); the same status without a
// number, or another status, is said as the platform said it. A call's
// 400 was an error of the platform, retried with the same number.
func TestSMSRefused(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name   string
		status int
		from   string
		want   string // the start of the error
		call   bool
	}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		c := serveFixed(t, &fixed{status: tc.status, body: `{"error":"refused"}`})
		var err error
		if tc.call {
			_, err = c.PlaceCall(context.Background(), CallRequest{To: "+447700900002", AgentNumber: tc.from})
		} else {
			_, err = c.SendSMS(context.Background(), SMSRequest{To: "+447700900002", Message: "hi", ConnectorID: "CONN-1", AgentNumber: tc.from})
		}
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("err = %v, want it to start %q", err, tc.want)
		}
		// Only the first is the number refused as written.
		if got, want := IsUnprovisioned(err), strings.Contains(tc.want, "provisioned"); got != want {
			t.Errorf("IsUnprovisioned = %t, want %t", got, want)
		}
	}
	for _, tc := range []testCase{
		{"400 from a number", http.StatusBadRequest, "+15550009", "from +15550009: the agent number must be one provisioned for the project: POST /v1/outbound-sms: 400", false},
		{"400", http.StatusBadRequest, "", "POST /v1/outbound-sms: 400", false},
		{"404 from a number", http.StatusNotFound, "+15550009", "POST /v1/outbound-sms: 404", false},
		{"403 from a number", http.StatusForbidden, "+15550009", "POST /v1/outbound-sms: 403", false},
		{"call 400 from a number", http.StatusBadRequest, "+15550009", "from +15550009: the agent number must be one provisioned for the project: POST /v1/outbound-calling: 400", true},
		{"call 400", http.StatusBadRequest, "", "POST /v1/outbound-calling: 400", true},
		{"call 422 from a number", http.StatusUnprocessableEntity, "+15550009", "POST /v1/outbound-calling: 422", true},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

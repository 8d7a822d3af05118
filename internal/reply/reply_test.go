package reply

import (
	"reflect"
	"testing"
)

func TestParseTurn(t *testing.T) {
	t.Parallel()
	const plain = `{"conversationId":"c1","userInput":"hi","response":"Hello","metadata":{"currentNode":"Greet"},"conversationEnded":true,"delayedResponse":true}`
	type testCase struct {
		name string
		body string
		ok   bool
	}
	run := func(t *testing.T, tc testCase) {
		res, ok := ParseTurn([]byte(tc.body))
		if ok != tc.ok {
			t.Fatalf("ParseTurn(%s) ok = %v, want %v", tc.body, ok, tc.ok)
		}
		if !ok {
			if res != nil {
				t.Errorf("ParseTurn(%s) = %+v with ok false", tc.body, res)
			}
			return
		}
		want := TurnResult{ConversationID: "c1", UserInput: "hi", Response: "Hello", ConversationEnded: true, DelayedResponse: true,
			RawMetadata: []byte(`{"currentNode":"Greet"}`), Plain: true}
		if !reflect.DeepEqual(*res, want) {
			t.Errorf("ParseTurn(%s) = %+v, want %+v", tc.body, *res, want)
		}
		if res.Meta() != nil {
			t.Errorf("ParseTurn decoded the metadata: %v", res.Meta())
		}
	}
	cases := []testCase{
		{"the reference's shape", plain, true},
		{"not JSON", `{"conversationId":`, false},
		{"no conversationId", `{"userInput":"hi","response":"Hello","metadata":{},"conversationEnded":true,"delayedResponse":true}`, false},
		{"no userInput", `{"conversationId":"c1","response":"Hello","metadata":{},"conversationEnded":true,"delayedResponse":true}`, false},
		{"no response", `{"conversationId":"c1","userInput":"hi","metadata":{},"conversationEnded":true,"delayedResponse":true}`, false},
		{"no conversationEnded", `{"conversationId":"c1","userInput":"hi","response":"Hello","metadata":{},"delayedResponse":true}`, false},
		{"no delayedResponse", `{"conversationId":"c1","userInput":"hi","response":"Hello","metadata":{},"conversationEnded":true}`, false},
		{"no metadata", `{"conversationId":"c1","userInput":"hi","response":"Hello","conversationEnded":true,"delayedResponse":true}`, false},
		{"metadata not an object", `{"conversationId":"c1","userInput":"hi","response":"Hello","metadata":[1],"conversationEnded":true,"delayedResponse":true}`, false},
		{"null member", `{"conversationId":null,"userInput":"hi","response":"Hello","metadata":{},"conversationEnded":true,"delayedResponse":true}`, false},
		{"member of another type", `{"conversationId":"c1","userInput":"hi","response":"Hello","metadata":{},"conversationEnded":"true","delayedResponse":true}`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { t.Parallel(); run(t, tc) })
	}
}

// checkPredicate runs a table of inputs to a predicate over strings.
func checkPredicate(t *testing.T, name string, f func(string) bool, want map[string]bool) {
	t.Helper()
	for in, w := range want {
		if got := f(in); got != w {
			t.Errorf("%s(%q) = %v, want %v", name, in, got, w)
		}
	}
}

func TestIsAgentJoined(t *testing.T) {
	t.Parallel()
	checkPredicate(t, "IsAgentJoined", IsAgentJoined, map[string]bool{
		"EVENT_TYPE_VENDOR_AGENT_JOINED": true,
		"EVENT_TYPE_AGENT_JOINED":        true,
		"EVENT_TYPE_LIVE_AGENT_JOINED":   false,
		"EVENT_TYPE_HUMAN_AGENT_JOINED":  false,
		"VENDOR_AGENT_JOINED":            false,
		"EVENT_TYPE_VENDOR_AGENT_JOIN":   false,
	})
}

func TestMessagingErrorsAndTypes(t *testing.T) {
	t.Parallel()
	m := &Messaging{
		Events: []Event{{Type: "EVENT_TYPE_A"}, {Type: "EVENT_TYPE_B"}},
		System: []SystemMessage{
			{Level: SystemLevelError, Text: "boom"},
			{Level: "SYSTEM_MESSAGE_LEVEL_INFO", Text: "fyi"},
			{Level: "error", Text: "lower case"},
			{Text: "no level"},
		},
	}
	if got, want := m.Types(), []string{"EVENT_TYPE_A", "EVENT_TYPE_B"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Types() = %v, want %v", got, want)
	}
	want := []SystemMessage{{Level: SystemLevelError, Text: "boom"}, {Level: "error", Text: "lower case"}}
	if got := m.Errors(); !reflect.DeepEqual(got, want) {
		t.Errorf("Errors() = %v, want %v", got, want)
	}
	var none *Messaging
	if none.Types() != nil || none.Errors() != nil {
		t.Error("a nil Messaging has types or errors")
	}
}

func TestValidEnv(t *testing.T) {
	t.Parallel()
	checkPredicate(t, "ValidEnv", ValidEnv, map[string]bool{
		"sandbox": true, "pre-release": true, "live": true,
		"": false, "Live": false, "prerelease": false, "production": false,
	})
}

// TestEnvMeant: the names pipelines give the platform's environments are
// taken for them, whatever their case; any other name, the platform's own
// included, means none.
func TestEnvMeant(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]string{
		"prod": "live", "Production": "live", "STAGING": "pre-release", "uat": "pre-release", "dev": "sandbox", "Pre-Prod": "pre-release", "pre_prod": "pre-release",
		"live": "", "sandbox": "", "prod2": "", "": "",
	} {
		if got := EnvMeant(name); got != want {
			t.Errorf("EnvMeant(%q) = %q, want %q", name, got, want)
		}
	}
}

package platform

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestChatBodyKeys holds startKey and turnKey to the members of ChatStart
// and ChatTurn: a member added to a request and not to its key would
// have chatBody send the body of another request.
func TestChatBodyKeys(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		req, key reflect.Type
		maps     []string
	}{
		{reflect.TypeFor[ChatStart](), reflect.TypeFor[startKey](), []string{"IntegrationAttributes"}},
		{reflect.TypeFor[ChatTurn](), reflect.TypeFor[turnKey](), []string{"Metadata"}},
	} {
		var members, maps []string
		for f := range tc.req.Fields() {
			if f.Type.Kind() == reflect.String {
				members = append(members, strings.ToLower(f.Name))
			} else {
				maps = append(maps, f.Name)
			}
		}
		var keys []string
		for f := range tc.key.Fields() {
			keys = append(keys, strings.ToLower(f.Name))
		}
		if !reflect.DeepEqual(members, keys) || !reflect.DeepEqual(maps, tc.maps) {
			t.Errorf("%v: strings %v, others %v; %v holds %v and chatBody checks %v", tc.req, members, maps, tc.key, keys, tc.maps)
		}
	}
}

// TestChatBodyRemembered checks that a request without a map is encoded
// once (the next body is the same memory, at no allocation) and as
// encoding/json encodes it, that its kept copy is redacted while the body
// sent is not, and that a request with a map is encoded every time.
func TestChatBodyRemembered(t *testing.T) {
	c := newTestClient(t, "http://127.0.0.1:1", RetryPolicy{})
	turn := ChatTurn{ClientEnv: "sandbox", Message: "my key is bk-secret-build"}
	key := turnKey{turn.ClientEnv, turn.ASRLang, turn.TTSLang, turn.Message}
	body, kept, err := chatBody(c, &c.turns, key, true, turn)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := json.Marshal(turn); !bytes.Equal(body, want) {
		t.Errorf("body %s, want %s", body, want)
	}
	if want := `{"clientEnv":"sandbox","message":"my key is [REDACTED]"}`; string(kept) != want {
		t.Errorf("kept %s, want %s", kept, want)
	}
	if n := testing.AllocsPerRun(10, func() {
		again, keptAgain, err := chatBody(c, &c.turns, key, true, turn)
		if err != nil || &again[0] != &body[0] || &keptAgain[0] != &kept[0] {
			t.Errorf("the second body is another: %s, %s, %v", again, keptAgain, err)
		}
	}); n != 0 {
		t.Errorf("a remembered body takes %v allocations", n)
	}

	turn.Metadata = map[string]any{"n": 1}
	with, _, err := chatBody(c, &c.turns, key, turn.Metadata == nil, turn)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := json.Marshal(turn); !bytes.Equal(with, want) {
		t.Errorf("body with metadata %s, want %s", with, want)
	}
	if len(c.turns.m) != 1 {
		t.Errorf("%d bodies remembered, want 1", len(c.turns.m))
	}
}

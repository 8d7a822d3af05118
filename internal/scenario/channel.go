package scenario

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agenttest/agenttest/internal/diag"
)

// channels are the conversation channels agenttest knows: the reference's
// (VOICE-SIP, WEBCHAT, CHAT) and SMS, which an SMS conversation carries
// on the simulator (the reference names no channel of SMS). The reference
// says "usually", so a channel outside the list is sent as written.
var channels = []string{"VOICE-SIP", "WEBCHAT", "CHAT", "SMS"}

// channelWarning is the warning of a session channel that is close to a
// known one without being it ("voice-sip", "VOICE_SIP", "VOICE-SPI"): the
// platform takes it as written, and a session on a channel it does not
// know is no call (no call_sid, no from_ and to, no recording), so every
// voice check would fail the agent. "" for a known channel, one near
// none (another platform's), and one built with ${...}.
func channelWarning(ch string) (msg, hint string) {
	if ch == "" || slices.Contains(channels, ch) || strings.Contains(ch, "${") {
		return "", ""
	}
	meant := diag.Suggest(ch, channels)
	if meant == "" {
		return "", ""
	}
	msg = fmt.Sprintf("channel %q is not one the platform names, and is close to %s: it is sent as written, and the platform may open the session on a channel it does not know", ch, meant)
	if meant == "VOICE-SIP" {
		msg += ", which is not a call (no call_sid, from_ or to, no recording)"
	}
	hint = fmt.Sprintf("did you mean %q?", meant)
	if ch != strings.ToUpper(ch) {
		// Said only where it is the mistake: of "VOICE_SIP" it would
		// send the reader after the wrong one.
		hint += " channels are written in capitals"
	}
	return msg, hint
}

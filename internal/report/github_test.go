package report

import (
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/diag"
)

// The escapes of @actions/core (command.ts): a message may not end the
// command early, and a property may not end itself or the property list.
func TestGitHubEscapes(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	annotation(&b, "error", diag.Pos{File: "suites/a,b:c.yaml", Line: 3, Col: 7}, "50% off, now: cheap\r\n",
		"100% sure\r\nline two: a, b\n")
	want := "::error file=suites/a%2Cb%3Ac.yaml,line=3,col=7,title=agenttest 50%25 off%2C now%3A cheap%0D%0A::" +
		"100%25 sure%0D%0Aline two: a, b\n"
	if got := b.String(); got != want {
		t.Errorf("annotation:\n got %q\nwant %q", got, want)
	}
	if got := mdText("a | b <script>*x*</script>\nnext"); got != `a \| b &lt;script&gt;\*x\*&lt;/script&gt; next` {
		t.Errorf("mdText = %q", got)
	}
}

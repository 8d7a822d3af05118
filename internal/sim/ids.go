package sim

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/agenttest/agenttest/internal/sim/agent"
)

// isPrefixedID reports whether id is prefix followed by exactly 8 letters
// or digits: the reference's ws-<8 chars> and PROJECT-<8 chars> forms.
func isPrefixedID(id, prefix string) bool {
	rest, ok := strings.CutPrefix(id, prefix)
	if !ok || len(rest) != 8 {
		return false
	}
	for _, r := range rest {
		if !isAlnum(r) {
			return false
		}
	}
	return true
}

// isSlug reports whether id is a lower-case slug (letters, digits, '-',
// '_'), the form of the studio console URLs.
func isSlug(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

func isAlnum(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
}

// checkAccount validates the account_id path segment. It returns a message
// for a 404 when the id is not this workspace.
func (s *Server) checkAccount(id string) (string, bool) {
	switch {
	case id == s.opts.AccountID || id == s.opts.AccountSlug:
		return "", true
	case strings.HasPrefix(id, obsoleteAccountPrefix):
		return fmt.Sprintf("account id %q uses the obsolete ACCOUNT- prefix; use the workspace id in ws-XXXXXXXX form (this workspace: %s)", id, s.opts.AccountID), false
	case !isPrefixedID(id, "ws-") && !isSlug(id):
		return fmt.Sprintf("malformed account id %q: want ws-XXXXXXXX or the workspace slug", id), false
	default:
		return fmt.Sprintf("account %q not found", id), false
	}
}

// resolveAgent maps a project or agent id (slug or PROJECT- form) to its
// definition, checking the key's rights first. On failure it writes the
// response (403 or 404) and returns nil.
func (s *Server) resolveAgent(w http.ResponseWriter, fam family, k keyScope, id string) (*agent.Definition, string) {
	if k.project != "" && k.project != id {
		s.fail(w, fam, CodeForbidden, fmt.Sprintf("API key has no rights for project %q", id))
		return nil, ""
	}
	agentID := id
	if a, ok := s.aliases[id]; ok {
		agentID = a
	}
	def, ok := s.agents[agentID]
	if !ok {
		msg := fmt.Sprintf("project %q not found", id)
		if !isSlug(id) && !isPrefixedID(id, "PROJECT-") {
			msg = fmt.Sprintf("malformed project id %q: want a slug or PROJECT-XXXXXXXX", id)
		}
		code := CodeNotFound
		if fam == familyDebugChat {
			code = CodeAgentNotFound
			msg = strings.Replace(msg, "project", "agent", 1)
		}
		s.fail(w, fam, code, msg)
		return nil, ""
	}
	return def, agentID
}

// runtimeProject resolves the account and project segments of a runtime
// path, writing the error response on failure.
func (s *Server) runtimeProject(w http.ResponseWriter, r *http.Request, k keyScope) (*agent.Definition, string) {
	if msg, ok := s.checkAccount(r.PathValue("accountId")); !ok {
		failStatus(w, http.StatusNotFound, msg)
		return nil, ""
	}
	return s.resolveAgent(w, familyConversations, k, r.PathValue("projectId"))
}

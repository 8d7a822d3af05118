package sim

import (
	"encoding/json"
	"net/http"
	"strconv"
	"sync/atomic"
)

// family is which error body a path uses: the conversations groups answer
// {error_message}; debug chat answers its richer body, which also carries
// error_message so a client reading only that member works for both.
type family int

const (
	familyConversations family = iota
	familyDebugChat
	// familyAlerts is the alerts and webhooks groups: {message, errors}.
	familyAlerts
	// familyMessaging is the messaging host: {error}.
	familyMessaging
)

// convError is the error body of the Conversations and handoff groups.
type convError struct {
	ErrorMessage string `json:"error_message"`
}

// chatError is the reference's debug-chat error body.
type chatError struct {
	Success      bool   `json:"success"`
	Error        string `json:"error"`
	ErrorID      string `json:"error_id"`
	ErrorCode    string `json:"error_code"`
	ErrorMessage string `json:"error_message"`
	Data         any    `json:"data"`
}

// writeJSON writes v with status. Encoding errors can only come from a
// broken connection at this point, so they are dropped.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"error_message":"encode response"}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)+1))
	w.WriteHeader(status)
	b = append(b, '\n')
	_, _ = w.Write(b)
}

// errorIDs numbers debug-chat errors; error_id only has to be unique per
// server, and a counter keeps test output reproducible.
type errorIDs struct{ n atomic.Uint64 }

func (e *errorIDs) next() string { return "err-" + strconv.FormatUint(e.n.Add(1), 10) }

// fail writes an error in the body of the path's family. code is a
// debug-chat error code; conversation paths use only its status. The
// messaging host answers in its own body (failMessaging), faults too.
func (s *Server) fail(w http.ResponseWriter, fam family, code, msg string) {
	status, ok := debugChatStatus[code]
	if !ok {
		status = http.StatusInternalServerError
	}
	if fam == familyAlerts {
		writeJSON(w, status, alertError{Message: msg, Errors: []fieldError{}})
		return
	}
	if fam == familyDebugChat {
		writeJSON(w, status, chatError{
			Error:        http.StatusText(status),
			ErrorID:      s.errIDs.next(),
			ErrorCode:    code,
			ErrorMessage: msg,
		})
		return
	}
	writeJSON(w, status, convError{ErrorMessage: msg})
}

// failStatus writes a conversations-family error with an explicit status.
func failStatus(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, convError{ErrorMessage: msg})
}

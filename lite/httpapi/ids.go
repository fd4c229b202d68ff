package httpapi

import (
	"net/http"
	"strings"

	"github.com/agnx-lite/agnx-lite/agents"
)

// Limits on the names and ids a request carries, checked before anything
// uses them: a 100 KB session id reached the database as a key and a
// 5,000-character agent name the file system as a folder name, both
// answered 500. Session ids are session_<ULID>, as in Agnx (16 hex
// digits before lite took Agnx's); agent names are folder names.
const (
	maxIDLen     = 128
	maxNameLen   = 128
	maxChatIDLen = 256
)

// badPathValue checks the {id} and {name} of a route's path. One that is
// not well formed names nothing: 404, with the code and the sentence to
// answer, as for any unknown session or agent.
func badPathValue(pattern string, r *http.Request) (code, msg string) {
	if strings.Contains(pattern, "/schedules/{id}") && !validID(r.PathValue("id")) {
		return codeScheduleNotFound, noSchedule
	}
	if strings.Contains(pattern, "{id}") && !validID(r.PathValue("id")) {
		return codeSessionNotFound, "no such session: a session id is at most 128 letters, digits, '-' and '_' (GET /api/v1/sessions lists them)"
	}
	if strings.Contains(pattern, "{name}") && !validAgentName(r.PathValue("name")) {
		return codeAgentNotFound, "no such agent: an agent name is at most 128 letters, digits and hyphens (GET /api/v1/agents lists them)"
	}
	return "", ""
}

func validID(id string) bool {
	if id == "" || len(id) > maxIDLen {
		return false
	}
	for _, c := range id {
		if !(c == '-' || c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

func validAgentName(name string) bool { return len(name) <= maxNameLen && agents.ValidName(name) }

// validChatID accepts what gateways use as chat ids (Telegram's are
// numbers, others' opaque strings) up to a length, without control
// characters.
func validChatID(id string) bool {
	if len(id) > maxChatIDLen {
		return false
	}
	for _, c := range id {
		if c < 0x20 || c == 0x7f {
			return false
		}
	}
	return true
}

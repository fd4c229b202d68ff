package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// problem is an RFC 7807 error body. Code is an extension member: the
// lite code of the problem, also when the type is one of Agnx's three.
type problem struct {
	Type     string `json:"type"`
	Title    string `json:"title"`
	Status   int    `json:"status"`
	Detail   string `json:"detail,omitempty"`
	Instance string `json:"instance,omitempty"`
	Code     string `json:"code,omitempty"`
}

// Agnx's problem types: every 400, 404 and 500 answer has one, whatever
// the lite code, so that Agnx clients read it as Agnx would answer.
var parentProblems = map[int]struct{ typ, title string }{
	http.StatusBadRequest:          {"urn:duragent:problem:bad-request", "Bad Request"},
	http.StatusNotFound:            {"urn:duragent:problem:not-found", "Not Found"},
	http.StatusInternalServerError: {"urn:duragent:problem:internal-error", "Internal Server Error"},
}

// litePrefix is the type of every other problem: urn:agnx-lite:problem:<code>.
const litePrefix = "urn:agnx-lite:problem:"

// problemType returns the type and title of a problem.
func problemType(status int, code string) (typ, title string) {
	if p, ok := parentProblems[status]; ok {
		return p.typ, p.title
	}
	return litePrefix + code, titles[code]
}

// Problem codes: the code member of every problem, and the last part of
// the type urn:agnx-lite:problem:<code> of those that are not Agnx's.
const (
	codeNotFound         = "not_found"
	codeInvalid          = "invalid_request"
	codeUnauthorized     = "unauthorized"
	codeForbidden        = "forbidden"
	codeInternal         = "internal_error"
	codeSessionNotFound  = "session_not_found"
	codeSessionEnded     = "session_ended"
	codeAgentNotFound    = "agent_not_found"
	codeTooLarge         = "payload_too_large"
	codeUnavailable      = "service_unavailable"
	codeTimeout          = "request_timeout"
	codeProvider         = "provider_error"
	codeMethodNotAllowed = "method_not_allowed"
	codeMisdirected      = "misdirected_request"
	codeOrigin           = "origin_not_allowed"
	codeMediaType        = "unsupported_media_type"
	codeAgentInvalid     = "agent_invalid"
	// codeTooMany: a webhook over its max_per_minute (429).
	codeTooMany = "too_many_requests"
	// codeInsufficientStorage: a commit failed for want of disk (507).
	codeInsufficientStorage = "insufficient_storage"
	// codeTokenBudget: the agent used its daily token budget (429).
	codeTokenBudget = "token_budget"
)

var titles = map[string]string{
	codeNotFound: "Not Found", codeInvalid: "Invalid request", codeUnauthorized: "Unauthorized",
	codeForbidden: "Forbidden", codeInternal: "Internal error",
	codeSessionNotFound: "Session not found", codeSessionEnded: "Session ended",
	codeAgentNotFound: "Agent not found", codeTooLarge: "Payload too large",
	codeUnavailable: "Service unavailable", codeProvider: "Model provider error",
	codeMethodNotAllowed: "Method not allowed",
	codeMisdirected:      "Misdirected request", codeOrigin: "Origin not allowed",
	codeMediaType: "Unsupported media type", codeAgentInvalid: "Agent invalid",
	codeInsufficientStorage: "Insufficient storage", codeTooMany: "Too many requests",
	codeTokenBudget: "Daily token budget used", codeTurnRunning: "Turn running", codeSessionAnswered: "Session answered",
	codeTaskNotFound: "Task not found", codeTaskConflict: "Task conflict", codeTaskInvalid: "Task invalid",
}

func writeProblem(w http.ResponseWriter, r *http.Request, status int, code, detail string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	typ, title := problemType(status, code)
	_ = json.NewEncoder(w).Encode(problem{
		Type: typ, Title: title, Status: status,
		Detail: detail, Instance: clip(r.URL.Path, 256), Code: code,
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// decode reads a JSON body into v: one object, at most the body limit.
// Fields v does not have are ignored, as Agnx does. Its error is the
// sentence for a 400 (not JSON), 413 (too large) or 422 (JSON of the
// wrong shape).
func decode(r *http.Request, v any) (status int, err error) {
	dec := json.NewDecoder(r.Body)
	if err := dec.Decode(v); err != nil {
		return decodeError(err)
	}
	if dec.More() {
		return http.StatusBadRequest, errors.New("the body holds more than one JSON value: send one object")
	}
	if _, err := io.Copy(io.Discard, r.Body); err != nil {
		return decodeError(err)
	}
	return 0, nil
}

func decodeError(err error) (int, error) {
	var tooBig *http.MaxBytesError
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &tooBig):
		return http.StatusRequestEntityTooLarge, fmt.Errorf("the body is larger than %d bytes: send less", tooBig.Limit)
	case errors.Is(err, io.EOF):
		return http.StatusBadRequest, errors.New("the body is empty: send a JSON object")
	case errors.As(err, &syntax):
		return http.StatusBadRequest, fmt.Errorf("the body is not valid JSON (at byte %d): send a JSON object", syntax.Offset)
	case errors.As(err, &typ) && typ.Field == "":
		return http.StatusUnprocessableEntity, fmt.Errorf("the body must be a JSON object, not a %s", typ.Value)
	case errors.As(err, &typ):
		return http.StatusUnprocessableEntity, fmt.Errorf("field %q must be a %s, not a %s", typ.Field, typ.Type, typ.Value)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return http.StatusBadRequest, errors.New("the body ends in the middle of the JSON: send a whole object")
	}
	return http.StatusBadRequest, fmt.Errorf("the body could not be read: %v", err)
}

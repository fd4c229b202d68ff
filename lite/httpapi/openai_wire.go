package httpapi

import (
	"encoding/json"
	"net/http"
	"strings"
)

// The OpenAI chat API's wire format, as far as the endpoint reads and
// writes it (openai.go). Fields a request may carry that lite has no use
// for (temperature, tools, n, ...) are ignored: the agent's own settings
// rule.

// maxOAMessages bounds the messages of one request; a client that
// resends a long history sends at most this many.
const maxOAMessages = 4096

// SessionKeyHeader chooses the caller's session on /v1/chat/completions
// when the body has no "user" field.
const SessionKeyHeader = "X-Agnx-Session-Key"

// ApprovalsHeader set to "wait" on /v1/chat/completions leaves a tool
// call that needs an approval waiting for a person to answer it (in the
// web UI, `agnx-lite attach` or POST …/approve) instead of denying it.
const ApprovalsHeader = "X-Agnx-Approvals"

type oaRequest struct {
	Model         string      `json:"model"`
	Messages      []oaMessage `json:"messages"`
	Stream        bool        `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	User string `json:"user"`
}

type oaMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// oaPart is one part of a message's content given as an array.
type oaPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// chatTurn is what a request asks for: the agent, the new message (the
// tail of the history the client resent) and how to answer.
type chatTurn struct {
	agent        string
	input        string
	user         string
	stream       bool
	includeUsage bool
}

// oaBadRequest is a request the client must change: the 400's sentence and
// the field it is about.
type oaBadRequest struct {
	status int
	param  string
	msg    string
}

func (e *oaBadRequest) Error() string { return e.msg }

func badParam(param, msg string) *oaBadRequest {
	return &oaBadRequest{status: http.StatusBadRequest, param: param, msg: msg}
}

// parseChatRequest reads a chat completion request. The client resends
// the whole conversation each time, so only its tail is new: the user
// messages after the last assistant message, joined by a blank line.
// System and developer messages are ignored (the agent's own prompt
// rules); a tool message in the tail is refused, since agnx-lite runs the
// agent's tools itself.
func parseChatRequest(data []byte) (chatTurn, *oaBadRequest) {
	var req oaRequest
	if err := json.Unmarshal(data, &req); err != nil {
		_, msg := decodeError(err)
		return chatTurn{}, &oaBadRequest{status: http.StatusBadRequest, msg: msg.Error()}
	}
	t := chatTurn{agent: req.Model, user: req.User, stream: req.Stream,
		includeUsage: req.StreamOptions != nil && req.StreamOptions.IncludeUsage}
	switch {
	case req.Model == "":
		return t, badParam("model", `field "model" is required: name an agent (GET /v1/models lists them)`)
	case !validAgentName(req.Model):
		return t, badParam("model", `field "model" is not an agent name: names are at most 128 letters, digits and hyphens (GET /v1/models lists them)`)
	case !validChatID(req.User):
		return t, badParam("user", `field "user" must be at most 256 characters, with no control characters`)
	case len(req.Messages) == 0:
		return t, badParam("messages", `field "messages" is required: send the conversation, ending with a user message`)
	case len(req.Messages) > maxOAMessages:
		return t, badParam("messages", `field "messages" holds more than 4096 messages: send only the newest ones`)
	}
	var tail []string
	for i := len(req.Messages) - 1; i >= 0; i-- {
		m := req.Messages[i]
		if m.Role == "assistant" {
			break
		}
		switch m.Role {
		case "system", "developer":
			continue
		case "user":
		case "tool", "function":
			return t, badParam("messages", "a "+m.Role+" message follows the last assistant message: agnx-lite runs the agent's tools itself, so send only user messages")
		default:
			return t, badParam("messages", "message role "+clip(strings.ToValidUTF8(m.Role, "?"), 32)+" is not one of system, developer, user, assistant, tool")
		}
		text, bad := messageText(m.Content)
		if bad != nil {
			return t, bad
		}
		if strings.TrimSpace(text) != "" {
			tail = append(tail, text)
		}
	}
	if len(tail) == 0 {
		return t, badParam("messages", "no user message follows the last assistant message: end the conversation with the user's new message")
	}
	for i, j := 0, len(tail)-1; i < j; i, j = i+1, j-1 {
		tail[i], tail[j] = tail[j], tail[i]
	}
	t.input = strings.Join(tail, "\n\n")
	return t, nil
}

// messageText is a message's text: content given as a string, or as an
// array of text parts (joined by newlines). Images and audio are refused.
func messageText(raw json.RawMessage) (string, *oaBadRequest) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return "", nil
	}
	if s[0] == '"' {
		var text string
		if err := json.Unmarshal(raw, &text); err != nil {
			return "", badParam("messages", "a message's content is not a valid JSON string")
		}
		return text, nil
	}
	var parts []oaPart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", badParam("messages", "a message's content must be a string or an array of text parts")
	}
	texts := make([]string, 0, len(parts))
	for _, p := range parts {
		if p.Type != "text" {
			return "", badParam("messages", "content part type "+clip(strings.ToValidUTF8(p.Type, "?"), 32)+" is not supported: send text parts only")
		}
		texts = append(texts, p.Text)
	}
	return strings.Join(texts, "\n"), nil
}

// OpenAI's error object: {"error": {message, type, param, code}}.
type oaErrorBody struct {
	Error oaError `json:"error"`
}

type oaError struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// OpenAI's error types.
const (
	oaInvalidRequest = "invalid_request_error"
	oaAuthentication = "authentication_error"
	oaServer         = "server_error"
	oaQuota          = "insufficient_quota"
	// oaRateLimit is OpenAI's type for a 429 that waiting cures.
	oaRateLimit = "requests"
)

func newOAError(typ, code, param, msg string) oaErrorBody {
	e := oaError{Message: msg, Type: typ}
	if code != "" {
		e.Code = &code
	}
	if param != "" {
		e.Param = &param
	}
	return oaErrorBody{Error: e}
}

// writeOAError answers in OpenAI's error shape.
func writeOAError(w http.ResponseWriter, status int, typ, code, param, msg string) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	writeJSON(w, status, newOAError(typ, code, param, msg))
}

// oaChoice and the rest are the chat.completion object.
type oaCompletion struct {
	ID      string     `json:"id"`
	Object  string     `json:"object"`
	Created int64      `json:"created"`
	Model   string     `json:"model"`
	Choices []oaChoice `json:"choices"`
	Usage   *usageJSON `json:"usage,omitempty"`
}

type oaChoice struct {
	Index        int       `json:"index"`
	Message      *oaOut    `json:"message,omitempty"`
	FinishReason *string   `json:"finish_reason"`
	Logprobs     *struct{} `json:"logprobs"`
}

type oaOut struct {
	Role    string  `json:"role,omitempty"`
	Content *string `json:"content,omitempty"`
}

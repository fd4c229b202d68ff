package llmtest

import (
	"bytes"
	"encoding/json"
	"net/http"
)

// Message is one message of a recorded request.
type Message struct {
	Role       string
	Content    string
	ToolName   string // Ollama tool messages
	ToolCallID string // OpenAI tool messages
	ToolCalls  []ToolCall
}

// Tool is one tool a recorded request offered.
type Tool struct {
	Name        string
	Description string
	Parameters  string
}

// RecordedRequest is a request a fake received, decoded from either wire
// format into one shape.
type RecordedRequest struct {
	Path   string
	Header http.Header
	Raw    []byte

	Model        string
	Stream       bool
	IncludeUsage bool // OpenAI stream_options.include_usage
	Messages     []Message
	Tools        []Tool
	Temperature  *float64
	MaxTokens    int // max_tokens, or Ollama's options.num_predict
	NumCtx       int // Ollama options.num_ctx
	KeepAlive    string
	// Anthropic is the whole /v1/messages body, for the Anthropic fake.
	Anthropic *AnthropicRequest
}

// Last returns the last message, or a zero Message.
func (r RecordedRequest) Last() Message {
	if len(r.Messages) == 0 {
		return Message{}
	}
	return r.Messages[len(r.Messages)-1]
}

// LastUser returns the content of the last user message.
func (r RecordedRequest) LastUser() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return r.Messages[i].Content
		}
	}
	return ""
}

// ToolNames lists the names of the offered tools.
func (r RecordedRequest) ToolNames() []string {
	names := make([]string, len(r.Tools))
	for i, t := range r.Tools {
		names[i] = t.Name
	}
	return names
}

// ToolNameOf names the tool a tool message answers: its ToolName, or the
// name of the assistant call with its ToolCallID.
func (r RecordedRequest) ToolNameOf(m Message) string {
	if m.ToolName != "" {
		return m.ToolName
	}
	for _, prev := range r.Messages {
		for _, c := range prev.ToolCalls {
			if c.ID != "" && c.ID == m.ToolCallID {
				return c.Name
			}
		}
	}
	return "tool"
}

// wireRequest covers the fields of both wire formats.
type wireRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role       string  `json:"role"`
		Content    *string `json:"content"`
		ToolName   string  `json:"tool_name"`
		ToolCallID string  `json:"tool_call_id"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Function struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
	Options *struct {
		Temperature *float64 `json:"temperature"`
		NumPredict  int      `json:"num_predict"`
		NumCtx      int      `json:"num_ctx"`
	} `json:"options"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	KeepAlive   string   `json:"keep_alive"`
	Temperature *float64 `json:"temperature"`
	MaxTokens   int      `json:"max_tokens"`
}

// decodeRequest decodes a body of any of the formats. It is strict about JSON
// syntax, so a provider's encoder bug shows up as a 400.
func decodeRequest(r *http.Request, raw []byte) (RecordedRequest, error) {
	rec := RecordedRequest{Path: r.URL.Path, Header: r.Header.Clone(), Raw: raw}
	if r.URL.Path == "/v1/messages" {
		return rec, decodeAnthropic(&rec)
	}
	var w wireRequest
	if err := json.Unmarshal(raw, &w); err != nil {
		return rec, err
	}
	rec.Model, rec.Stream, rec.KeepAlive = w.Model, w.Stream, w.KeepAlive
	rec.Temperature, rec.MaxTokens = w.Temperature, w.MaxTokens
	if w.Options != nil {
		rec.Temperature, rec.MaxTokens, rec.NumCtx = w.Options.Temperature, w.Options.NumPredict, w.Options.NumCtx
	}
	rec.IncludeUsage = w.StreamOptions != nil && w.StreamOptions.IncludeUsage
	for _, m := range w.Messages {
		msg := Message{Role: m.Role, ToolName: m.ToolName, ToolCallID: m.ToolCallID}
		if m.Content != nil {
			msg.Content = *m.Content
		}
		for _, c := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: argsText(c.Function.Arguments)})
		}
		rec.Messages = append(rec.Messages, msg)
	}
	for _, t := range w.Tools {
		rec.Tools = append(rec.Tools, Tool{t.Function.Name, t.Function.Description, string(t.Function.Parameters)})
	}
	return rec, nil
}

// argsText gives arguments as JSON text whether they came as an object
// (Ollama) or as a JSON string holding the text (OpenAI).
func argsText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	}
	return string(raw)
}

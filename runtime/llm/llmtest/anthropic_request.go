package llmtest

import (
	"bytes"
	"encoding/json"
	"strings"
)

// AnthropicRequest is a /v1/messages body as the fake decoded it, for
// tests of the request's shape (cache breakpoints, grouping of blocks).
type AnthropicRequest struct {
	Model       string             `json:"model"`
	MaxTokens   int                `json:"max_tokens"`
	Stream      bool               `json:"stream"`
	Temperature *float64           `json:"temperature"`
	System      AnthropicContent   `json:"system"`
	Messages    []AnthropicMessage `json:"messages"`
	Tools       []AnthropicTool    `json:"tools"`
}

// AnthropicMessage is one message: a role and its content blocks.
type AnthropicMessage struct {
	Role    string           `json:"role"`
	Content AnthropicContent `json:"content"`
}

// AnthropicContent is a list of blocks; the API also takes a plain string,
// which decodes as one text block.
type AnthropicContent []AnthropicBlock

// UnmarshalJSON takes a string or an array of blocks.
func (c *AnthropicContent) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*c = AnthropicContent{{Type: "text", Text: s}}
		return nil
	}
	var blocks []AnthropicBlock
	if err := json.Unmarshal(b, &blocks); err != nil {
		return err
	}
	*c = blocks
	return nil
}

// Text joins the text of the text blocks.
func (c AnthropicContent) Text() string {
	var parts []string
	for _, b := range c {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// AnthropicBlock is a content block of any type; only the fields of its
// Type are set.
type AnthropicBlock struct {
	Type         string           `json:"type"`
	Text         string           `json:"text,omitempty"`
	ID           string           `json:"id,omitempty"`
	Name         string           `json:"name,omitempty"`
	Input        json.RawMessage  `json:"input,omitempty"`
	ToolUseID    string           `json:"tool_use_id,omitempty"`
	Content      AnthropicContent `json:"content,omitempty"`
	IsError      bool             `json:"is_error,omitempty"`
	Thinking     string           `json:"thinking,omitempty"`
	Signature    string           `json:"signature,omitempty"`
	Data         string           `json:"data,omitempty"`
	CacheControl *CacheControl    `json:"cache_control,omitempty"`
}

// CacheControl is a prompt-cache breakpoint.
type CacheControl struct {
	Type string `json:"type"`
}

// AnthropicTool is one tool definition.
type AnthropicTool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"input_schema"`
	CacheControl *CacheControl   `json:"cache_control,omitempty"`
}

// decodeAnthropic decodes a /v1/messages body into the common shape: the
// system prompt as a first "system" message, a user message's tool_result
// blocks as "tool" messages (then its text, if any, as a user message), an
// assistant message's text and tool_use blocks as one message.
func decodeAnthropic(rec *RecordedRequest) error {
	var w AnthropicRequest
	if err := json.Unmarshal(rec.Raw, &w); err != nil {
		return err
	}
	rec.Anthropic = &w
	rec.Model, rec.Stream, rec.Temperature, rec.MaxTokens = w.Model, w.Stream, w.Temperature, w.MaxTokens
	if len(w.System) > 0 {
		rec.Messages = append(rec.Messages, Message{Role: "system", Content: w.System.Text()})
	}
	for _, m := range w.Messages {
		if m.Role == "assistant" {
			msg := Message{Role: "assistant", Content: m.Content.Text()}
			for _, b := range m.Content {
				if b.Type == "tool_use" {
					msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: b.ID, Name: b.Name, Arguments: string(b.Input)})
				}
			}
			rec.Messages = append(rec.Messages, msg)
			continue
		}
		for _, b := range m.Content {
			if b.Type == "tool_result" {
				rec.Messages = append(rec.Messages, Message{Role: "tool", ToolCallID: b.ToolUseID, Content: b.Content.Text()})
			}
		}
		if text := m.Content.Text(); text != "" {
			rec.Messages = append(rec.Messages, Message{Role: "user", Content: text})
		}
	}
	for _, t := range w.Tools {
		rec.Tools = append(rec.Tools, Tool{t.Name, t.Description, string(t.InputSchema)})
	}
	return nil
}

package llmtest

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

// ToolCall is a call a fake model makes. Arguments is JSON object text.
type ToolCall struct {
	ID        string
	Name      string
	Arguments string
}

// Usage is the token count a fake reports. CacheRead and CacheWrite are
// parts of Prompt; only the Anthropic fake reports them. Reasoning is the
// part of Completion spent thinking; only the OpenAI fake reports it (as
// completion_tokens_details.reasoning_tokens), and only when set.
type Usage struct {
	Prompt, Completion    int
	CacheRead, CacheWrite int
	Reasoning             int
}

// Fault is a way for a reply to go wrong after it has begun.
type Fault int

// The faults. Each happens after Reply.FaultAfter chunks were sent, and
// always before the final chunk (done / [DONE]).
const (
	NoFault Fault = iota
	// Stall stops sending and holds the connection open until the client
	// gives up or the server is closed.
	Stall
	// Drop closes the connection without ending the chunked body, so the
	// client sees an unexpected EOF.
	Drop
	// StreamError sends the server's in-stream error object and ends.
	StreamError
	// Truncate ends the body cleanly, without the final chunk.
	Truncate
)

// Reply is one scripted answer.
type Reply struct {
	// Text is streamed in Chunks pieces; 0 means one piece per word.
	Text   string
	Chunks int
	// Thinking is streamed before Text as reasoning deltas. The Anthropic
	// fake signs it with Signature (empty means a made-up one).
	Thinking  string
	Signature string
	// ToolCalls are sent after the text. For OpenAI each call's arguments
	// are split into ArgChunks fragments (0 means 3).
	ToolCalls []ToolCall
	ArgChunks int
	// Usage is reported at the end; zero means a small made-up count.
	Usage Usage
	// StopReason is the done_reason / finish_reason / stop_reason; empty
	// means "stop", or "tool_calls" for an OpenAI reply with tool calls
	// (Anthropic: "end_turn" or "tool_use"). An Anthropic "max_tokens"
	// reply cuts its last tool call's input in half.
	StopReason string

	// Status, when not 0 or 200, answers with this HTTP status and an error
	// body in the server's shape carrying ErrorMessage (or Body verbatim),
	// with a Retry-After header when RetryAfter is set.
	Status       int
	Body         string
	RetryAfter   string
	ErrorMessage string

	// Fault makes the stream go wrong after FaultAfter chunks.
	Fault      Fault
	FaultAfter int
}

// Handler chooses the reply to a request. It is called from the server's
// goroutines, one call per request.
type Handler func(RecordedRequest) Reply

// Script returns a Handler that plays replies in order, then answers 500
// "llmtest: script exhausted".
func Script(replies ...Reply) Handler {
	return scriptT(nil, replies)
}

func scriptT(t testing.TB, replies []Reply) Handler {
	var mu sync.Mutex
	next := 0
	return func(RecordedRequest) Reply {
		mu.Lock()
		defer mu.Unlock()
		if next >= len(replies) {
			if t != nil {
				t.Errorf("llmtest: request %d but the script has %d replies", next+1, len(replies))
			}
			next++
			return Reply{Status: 500, ErrorMessage: "llmtest: script exhausted"}
		}
		next++
		return replies[next-1]
	}
}

// Echo returns a Handler that can answer any number of turns:
//   - after a tool result it answers "<tool> said: <result>";
//   - when the last user message contains "use NAME" and NAME is one of
//     the request's tools, it calls NAME, with the JSON object that
//     follows "use NAME" as arguments, or {};
//   - otherwise it answers "echo: <last user message>".
func Echo() Handler {
	return func(r RecordedRequest) Reply {
		last := r.Last()
		if last.Role == "tool" {
			return Reply{Text: r.ToolNameOf(last) + " said: " + last.Content}
		}
		text := r.LastUser()
		for _, name := range r.ToolNames() {
			i := strings.Index(text, "use "+name)
			if i < 0 {
				continue
			}
			return Reply{ToolCalls: []ToolCall{{Name: name, Arguments: leadingObject(text[i+4+len(name):])}}}
		}
		return Reply{Text: "echo: " + text}
	}
}

// leadingObject returns the JSON object s starts with (after spaces), or {}.
func leadingObject(s string) string {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "{") {
		return "{}"
	}
	var raw json.RawMessage
	if err := json.NewDecoder(strings.NewReader(s)).Decode(&raw); err != nil {
		return "{}"
	}
	return string(raw)
}

// TextToolCall is how small models write a tool call as text (Qwen and
// Hermes style): a <tool_call> block holding {"name", "arguments"}.
func TextToolCall(name, args string) string {
	if args == "" {
		args = "{}"
	}
	n, _ := json.Marshal(name)
	return "<tool_call>\n{\"name\": " + string(n) + ", \"arguments\": " + args + "}\n</tool_call>"
}

// split cuts s into n pieces of about equal rune count; n <= 0 cuts after
// each space, like a tokenizer would stream words.
func split(s string, n int) []string {
	if s == "" {
		return nil
	}
	if n <= 0 {
		return strings.SplitAfter(s, " ")
	}
	total := utf8.RuneCountInString(s)
	n = min(n, total)
	out := make([]string, 0, n)
	for i := 0; i < n; i++ {
		size := total / (n - i)
		total -= size
		end := 0
		for range size {
			_, w := utf8.DecodeRuneInString(s[end:])
			end += w
		}
		out = append(out, s[:end])
		s = s[end:]
	}
	return out
}

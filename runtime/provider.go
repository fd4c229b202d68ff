package runtime

import (
	"context"
	"errors"
	"fmt"
)

// Role is who wrote a Message.
type Role string

// The roles a conversation carries. System text travels in Request.System,
// never as a Message.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one entry of the model's context. Messages are immutable once
// appended to a session: workers share the session's slice without copying,
// so nothing may write to an element after it was appended.
type Message struct {
	Role    Role
	Content string
	// ToolCalls are the calls an assistant message asks for.
	ToolCalls []ToolCall
	// ToolCallID and ToolName tie a tool message to the call it answers.
	ToolCallID string
	ToolName   string
	// IsError marks a tool message whose call failed (Anthropic's
	// tool_result is_error); providers without the notion ignore it.
	IsError bool
	// Thinking are the reasoning blocks of an assistant message that its
	// provider needs back verbatim in later requests (Anthropic's signed
	// thinking during a tool loop). They are never shown as the answer.
	Thinking []ThinkingBlock
}

// ThinkingBlock is one block of a model's reasoning as its provider sent
// it: Text with the Signature that proves it came from the model, or, for
// reasoning the provider encrypted, only Redacted data. A block without a
// signature and without redacted data cannot be sent back.
type ThinkingBlock struct {
	Text      string
	Signature string
	Redacted  string
}

// ToolCall is one call the model asked for. Arguments is a JSON object as
// text, exactly as the model produced it (after assembly of stream fragments).
type ToolCall struct {
	ID        string
	Name      string
	Arguments string
}

// Usage counts the tokens of one model call.
type Usage struct {
	// PromptTokens counts the whole input, cached parts included.
	PromptTokens     int
	CompletionTokens int
	// CacheReadTokens and CacheWriteTokens are the parts of PromptTokens
	// read from and written to the provider's prompt cache (Anthropic's
	// cache_read_input_tokens and cache_creation_input_tokens).
	CacheReadTokens  int
	CacheWriteTokens int
	// ReasoningTokens is the part of CompletionTokens the model spent
	// thinking, where the provider reports it (OpenAI's
	// completion_tokens_details.reasoning_tokens); 0 otherwise.
	ReasoningTokens int
}

// Total is prompt plus completion tokens.
func (u Usage) Total() int { return u.PromptTokens + u.CompletionTokens }

// Add sums two usages.
func (u Usage) Add(o Usage) Usage {
	return Usage{
		PromptTokens:     u.PromptTokens + o.PromptTokens,
		CompletionTokens: u.CompletionTokens + o.CompletionTokens,
		CacheReadTokens:  u.CacheReadTokens + o.CacheReadTokens,
		CacheWriteTokens: u.CacheWriteTokens + o.CacheWriteTokens,
		ReasoningTokens:  u.ReasoningTokens + o.ReasoningTokens,
	}
}

// ToolSpec describes a tool to the model. Schema is a JSON Schema object
// (type "object" with properties), as raw JSON.
type ToolSpec struct {
	Name        string
	Description string
	Schema      []byte
}

// Request is one call to a model. Providers must not modify it or its
// slices: Messages is shared with the session that owns it.
type Request struct {
	Model    string
	System   string
	Messages []Message
	Tools    []ToolSpec
	// Temperature is nil for the provider's default.
	Temperature *float64
	// MaxOutputTokens is 0 for the provider's default.
	MaxOutputTokens int
	// ContextTokens asks a local server for a context window of this size
	// (Ollama options.num_ctx); 0 leaves the server's default.
	ContextTokens int
	// KeepAlive tells a local server how long to keep the model loaded
	// (Ollama keep_alive, e.g. "30m"); empty leaves the server's default.
	KeepAlive string
}

// Delta is a piece of a streaming answer. Deltas are ephemeral: they go to
// live subscribers and are never stored.
type Delta struct {
	Text string
	// Thinking is reasoning text some models stream apart from the answer;
	// it is never part of the visible answer.
	Thinking string
}

// Response is the final result of one model call.
type Response struct {
	Message Message
	Usage   Usage
	// StopReason is the provider's reason for stopping, as it names it
	// ("stop", "length", "tool_calls", "end_turn", ...).
	StopReason string
}

// Provider streams one model call. onDelta is called from the calling
// goroutine for each visible piece of text, in order; it must not block.
// Stream returns the assembled final message, or an error; a *ProviderError
// when the provider or the network is at fault.
type Provider interface {
	Stream(ctx context.Context, req *Request, onDelta func(Delta)) (*Response, error)
}

// ErrorKind says what went wrong with a provider, so callers can decide
// whether to retry and what to tell the user.
type ErrorKind int

// The kinds of provider failure.
const (
	ErrUnknown       ErrorKind = iota
	ErrUnreachable             // connection refused, DNS, connect timeout
	ErrModelNotFound           // the server does not have the model
	ErrAuth                    // 401/403: key missing or wrong
	ErrRateLimited             // 429
	ErrServer                  // 5xx
	ErrBadRequest              // 4xx other than the above
	ErrBadResponse             // a stream or body we could not parse
	ErrTimeout                 // first-token or stream-idle timeout
	ErrInterrupted             // the connection broke mid-stream
)

// ProviderError is a provider failure. Error returns one sentence a user can
// act on; Err keeps the cause for the log.
type ProviderError struct {
	Kind ErrorKind
	// Provider is the provider's name ("ollama", "openai", ...).
	Provider string
	// Status is the HTTP status, 0 when there was none.
	Status int
	// Message is the user-facing sentence: what went wrong and how to fix it.
	Message string
	Err     error
}

func (e *ProviderError) Error() string {
	if e.Message != "" {
		return e.Message
	}
	return fmt.Sprintf("%s: provider error (status %d)", e.Provider, e.Status)
}

func (e *ProviderError) Unwrap() error { return e.Err }

// Retryable reports whether the same request may succeed if sent again.
func (e *ProviderError) Retryable() bool {
	switch e.Kind {
	case ErrUnreachable, ErrRateLimited, ErrServer, ErrInterrupted, ErrTimeout:
		return true
	}
	return false
}

// IsProviderError reports whether err is a *ProviderError of kind k.
func IsProviderError(err error, k ErrorKind) bool {
	var pe *ProviderError
	return errors.As(err, &pe) && pe.Kind == k
}

package runtime

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSummaryText(t *testing.T) {
	for _, tt := range []struct {
		name, content, want, why string
		err                      error
	}{
		{name: "ok", content: "  The user likes milk.\n", want: "The user likes milk."},
		{name: "empty", content: " \n ", why: "the model's summary was empty"},
		{name: "garbage", content: "... --- !!!", why: "the model's summary held no text"},
		{name: "failed", err: &ProviderError{Kind: ErrTimeout}, why: "the summary call failed: timeout"},
		{name: "other error", err: errors.New("boom"), why: "the summary call failed: internal_error"},
		{name: "too long", content: strings.Repeat("milk ", 100), want: strings.Repeat("milk ", 8) + "…"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			text, why := summaryText(&Response{Message: Message{Content: tt.content}}, tt.err, 40)
			assert.Equal(t, tt.want, text)
			assert.Equal(t, tt.why, why)
		})
	}
}

// The transcript a summary call reads: the previous summary first, each
// message on its own line, long tool results and arguments cut short.
func TestTranscript(t *testing.T) {
	got := transcript("they met", []Message{
		{Role: RoleUser, Content: "find milk"},
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "1", Name: "lookup", Arguments: "{\n  \"q\": \"milk\"\n}"}}},
		{Role: RoleTool, ToolName: "lookup", ToolCallID: "1", Content: strings.Repeat("x", 5000)},
		{Role: RoleAssistant, Content: "found it"},
	})
	want := "Summary of the conversation before:\nthey met\n\nThe conversation since:\n" +
		"user: find milk\n" +
		"assistant calls lookup {\"q\":\"milk\"}\n" +
		"tool lookup result: " + strings.Repeat("x", maxSummaryResult) + "…\n" +
		"assistant: found it\n"
	assert.Equal(t, want, got)
}

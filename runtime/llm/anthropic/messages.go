package anthropic

import (
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/jsonw"
	"github.com/agnx-lite/agnx-lite/runtime/llm"
)

// continued opens a conversation whose oldest part was trimmed away and
// that would otherwise start with the assistant: the API wants a user
// message first.
const continued = "[earlier conversation omitted]"

// messageWriter writes the "messages" array. The API wants user and
// assistant to alternate, so consecutive messages of one role (a notice
// after an answer, tool results and a steering message) become the blocks
// of one message; tool results are user blocks.
type messageWriter struct {
	w           *jsonw.Writer
	toolsAsText bool
	role        string // role of the open message, "" before the first
	blocks      int    // blocks written in the open message
	lastBlock   int    // offset just before the last cacheable block's "}"
	thinkFrom   int    // index of the first message whose thinking is sent
}

func (m *messageWriter) write(msgs []runtime.Message) {
	m.lastBlock = -1
	m.thinkFrom = exchangeStart(msgs)
	m.w.Key("messages").Array()
	for i := range msgs {
		m.message(&msgs[i], i >= m.thinkFrom && !m.toolsAsText)
	}
	if m.role != "" {
		m.w.EndArray().EndObject()
	}
	m.w.EndArray()
	if m.lastBlock > 0 {
		m.w.B = insertAt(m.w.B, m.lastBlock, ","+cacheControl)
	}
}

// exchangeStart is the index of the last user message that opens an
// exchange (one that does not follow tool results). The API needs thinking
// back only within the running tool loop, after it; earlier thinking would
// only cost input tokens.
func exchangeStart(msgs []runtime.Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == runtime.RoleUser && (i == 0 || msgs[i-1].Role != runtime.RoleTool) {
			return i
		}
	}
	return 0
}

func (m *messageWriter) message(msg *runtime.Message, withThinking bool) {
	switch msg.Role {
	case runtime.RoleAssistant:
		for _, t := range msg.Thinking {
			if withThinking {
				m.thinking(t)
			}
		}
		if msg.Content != "" {
			m.text("assistant", msg.Content)
		}
		for _, c := range msg.ToolCalls {
			m.toolUse(c)
		}
	case runtime.RoleTool:
		m.toolResult(msg)
	default:
		if msg.Content != "" {
			m.text("user", msg.Content)
		}
	}
}

// open makes sure a message of role is open and starts a block in it.
func (m *messageWriter) open(role string) {
	if m.role != role {
		if m.role != "" {
			m.w.EndArray().EndObject()
		} else if role == "assistant" {
			m.w.Object().Key("role").String("user").Key("content").Array()
			m.w.Object().Key("type").String("text").Key("text").String(continued).EndObject()
			m.w.EndArray().EndObject()
		}
		m.w.Object().Key("role").String(role).Key("content").Array()
		m.role, m.blocks = role, 0
	}
	m.blocks++
	m.w.Object()
}

// close ends a block; cacheable says a breakpoint may go on it.
func (m *messageWriter) close(cacheable bool) {
	if cacheable {
		m.lastBlock = len(m.w.B)
	} else {
		m.lastBlock = -1
	}
	m.w.EndObject()
}

func (m *messageWriter) text(role, s string) {
	m.open(role)
	m.w.Key("type").String("text").Key("text").String(s)
	m.close(true)
}

// thinking writes a block the API signed; others cannot be sent back.
func (m *messageWriter) thinking(t runtime.ThinkingBlock) {
	switch {
	case t.Redacted != "":
		m.open("assistant")
		m.w.Key("type").String("redacted_thinking").Key("data").String(t.Redacted)
	case t.Signature != "":
		m.open("assistant")
		m.w.Key("type").String("thinking").Key("thinking").String(t.Text).Key("signature").String(t.Signature)
	default:
		return
	}
	m.close(false)
}

func (m *messageWriter) toolUse(c runtime.ToolCall) {
	if m.toolsAsText {
		m.text("assistant", "[called tool "+c.Name+" with "+c.Arguments+"]")
		return
	}
	m.open("assistant")
	m.w.Key("type").String("tool_use").Key("id").String(c.ID).Key("name").String(c.Name)
	if llm.IsObject(c.Arguments) {
		m.w.Key("input").RawString(c.Arguments)
	} else {
		m.w.Key("input").RawString("{}") // the model garbled it; the tool said so
	}
	m.close(true)
}

func (m *messageWriter) toolResult(msg *runtime.Message) {
	if m.toolsAsText {
		m.text("user", "[result of tool "+msg.ToolName+"]\n"+msg.Content)
		return
	}
	m.open("user")
	m.w.Key("type").String("tool_result").Key("tool_use_id").String(msg.ToolCallID)
	m.w.Key("content").String(msg.Content)
	if msg.IsError {
		m.w.Key("is_error").Bool(true)
	}
	m.close(true)
}

// insertAt inserts s into b at i.
func insertAt(b []byte, i int, s string) []byte {
	n := len(b)
	b = append(b, s...)
	copy(b[i+len(s):], b[i:n])
	copy(b[i:], s)
	return b
}

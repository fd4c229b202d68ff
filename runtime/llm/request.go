package llm

import (
	"fmt"
	"math/rand/v2"
	"strconv"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// AppendTools appends `,"tools":[...]` in the {"type":"function",
// "function":{name, description, parameters}} form that Ollama and
// OpenAI-compatible servers share. Each schema is inserted verbatim after
// checking it is a JSON object; an empty schema becomes EmptySchema.
func AppendTools(dst []byte, tools []runtime.ToolSpec) ([]byte, error) {
	dst = append(dst, `,"tools":[`...)
	for i, t := range tools {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"type":"function","function":{"name":`...)
		dst = runtime.AppendJSONString(dst, t.Name)
		dst = append(dst, `,"description":`...)
		dst = runtime.AppendJSONString(dst, t.Description)
		dst = append(dst, `,"parameters":`...)
		switch {
		case len(t.Schema) == 0:
			dst = append(dst, EmptySchema...)
		case IsObject(t.Schema):
			dst = append(dst, t.Schema...)
		default:
			return nil, fmt.Errorf("tool %q: schema is not a JSON object", t.Name)
		}
		dst = append(dst, '}', '}')
	}
	return append(dst, ']'), nil
}

// CallIDs makes ids for tool calls a server sent without one. The zero
// value is ready; use one per response. The random tag keeps the ids of
// different responses apart in a session's history.
type CallIDs struct{ tag string }

// Next returns the id of the n-th call (1-based) of the response.
func (g *CallIDs) Next(n int) string {
	if g.tag == "" {
		g.tag = strconv.FormatUint(uint64(rand.Uint32()), 36)
	}
	return "call_" + g.tag + "_" + strconv.Itoa(n)
}

// AppendMessages appends `"messages":[...]`: a system message first when
// system is set, then each message written by one, the provider's own
// encoding of a message.
func AppendMessages(dst []byte, system string, msgs []runtime.Message, one func([]byte, *runtime.Message) []byte) []byte {
	dst = append(dst, `"messages":[`...)
	if system != "" {
		dst = append(dst, `{"role":"system","content":`...)
		dst = runtime.AppendJSONString(dst, system)
		dst = append(dst, '}')
	}
	for i := range msgs {
		if i > 0 || system != "" {
			dst = append(dst, ',')
		}
		dst = one(dst, &msgs[i])
	}
	return append(dst, ']')
}

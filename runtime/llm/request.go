package llm

import (
	"fmt"
	"math/rand/v2"
	"strconv"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/jsonw"
)

// WriteTools writes the "tools" key and its array in the
// {"type":"function", "function":{name, description, parameters}} form that
// Ollama and OpenAI-compatible servers share. Each schema is inserted
// verbatim after checking it is a JSON object; an empty schema becomes
// EmptySchema.
func WriteTools(w *jsonw.Writer, tools []runtime.ToolSpec) error {
	w.Key("tools").Array()
	for _, t := range tools {
		w.Object()
		w.Key("type").String("function")
		w.Key("function").Object()
		w.Key("name").String(t.Name)
		w.Key("description").String(t.Description)
		switch {
		case len(t.Schema) == 0:
			w.Key("parameters").RawString(EmptySchema)
		case IsObject(t.Schema):
			w.Key("parameters").Raw(t.Schema)
		default:
			return fmt.Errorf("tool %q: schema is not a JSON object", t.Name)
		}
		w.EndObject().EndObject()
	}
	w.EndArray()
	return nil
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

// WriteMessages writes the "messages" key and its array: a system message
// first when system is set, then each message written by one, the
// provider's own encoding of a message.
func WriteMessages(w *jsonw.Writer, system string, msgs []runtime.Message, one func(*jsonw.Writer, *runtime.Message)) {
	w.Key("messages").Array()
	if system != "" {
		w.Object().Key("role").String("system").Key("content").String(system).EndObject()
	}
	for i := range msgs {
		one(w, &msgs[i])
	}
	w.EndArray()
}

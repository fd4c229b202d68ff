package runtime

import (
	"github.com/valyala/fastjson"

	"github.com/agnx-lite/agnx-lite/runtime/jsonw"
)

// Spawn links a subagent's session to the session that spawned it with
// the agent tool. It is set on the child's session_start (JSON "spawn",
// a lite extension) and folded into its state; ordinary sessions have
// none.
type Spawn struct {
	// Parent is the spawning session's id, Call the agent tool call that
	// spawned it.
	Parent string
	Call   string
	// Depth is 1 for the child of a session nobody spawned, 2 for its
	// child, and so on.
	Depth int
	// Ceiling are the agents whose policies bound the child's calls: its
	// parent's agent first, then the parent's own ceiling. A call runs
	// only if every one of them would let it (see ceilingDecide).
	Ceiling []string
	// Workspace is "parent" when the child works in its parent's
	// workspace, read-only; "" when in its own agent's.
	Workspace string
}

// Workspace modes of a spawned child.
const (
	WorkspaceOwn    = ""
	WorkspaceParent = "parent"
)

func (sp *Spawn) appendJSON(w *jsonw.Writer) {
	w.Object()
	w.Key("parent_id").String(sp.Parent)
	w.Key("call_id").String(sp.Call)
	w.Key("depth").Int(int64(sp.Depth))
	w.Key("ceiling").Array()
	for _, a := range sp.Ceiling {
		w.String(a)
	}
	w.EndArray()
	w.OptString("workspace", sp.Workspace)
	w.EndObject()
}

// decodeSpawn reads a "spawn" object; nil when v is not one.
func decodeSpawn(v *fastjson.Value) *Spawn {
	if v == nil || v.Type() != fastjson.TypeObject {
		return nil
	}
	sp := &Spawn{Parent: string(v.GetStringBytes("parent_id")), Call: string(v.GetStringBytes("call_id")),
		Depth: v.GetInt("depth"), Workspace: string(v.GetStringBytes("workspace"))}
	for _, a := range v.GetArray("ceiling") {
		if b, err := a.StringBytes(); err == nil {
			sp.Ceiling = append(sp.Ceiling, string(b))
		}
	}
	if sp.Parent == "" {
		return nil
	}
	return sp
}

// parent is the session's parent's id, "" when it has none.
func (s *state) parent() string {
	if s.Spawn == nil {
		return ""
	}
	return s.Spawn.Parent
}

// maxLastError bounds the error sentence a session keeps for its parent.
const maxLastError = 1 << 10

// ChildRef is a child a session spawned: its session id, and the seq of
// the spawn call's result in the parent.
type ChildRef struct {
	ID  string
	Seq uint64
}

// noteSpawn adds the child a spawn call's result (at seq) names.
func (s *state) noteSpawn(details []byte, seq uint64) {
	if len(details) == 0 {
		return
	}
	if id := fastjson.GetString(details, "spawned"); id != "" && !s.hasChild(id) {
		s.Children = append(s.Children, ChildRef{ID: id, Seq: seq})
	}
}

func (s *state) hasChild(id string) bool {
	for _, c := range s.Children {
		if c.ID == id {
			return true
		}
	}
	return false
}

// spawnedThisTurn reports whether child c was spawned in the active turn.
func (s *state) spawnedThisTurn(c ChildRef) bool { return s.TurnActive && c.Seq > s.TurnSeq }

// lastAnswer is the text of the session's last answer since its last
// user message, "" when none.
func (s *state) lastAnswer() string {
	h := s.History
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].Role == RoleUser {
			break
		}
		if h[i].Role == RoleAssistant && h[i].Content != "" {
			return h[i].Content
		}
	}
	return ""
}

package agents

// MemoryDirective is the directive an agent with memory gets unless a
// directives folder (the data dir's or its own) has a memory.md: how to
// use the memory tool. It means what Agnx's default memory directive
// means, and adds recall's query.
const MemoryDirective = "You have a persistent memory, used through the `memory` tool:\n" +
	"- action `recall` loads your memory: shared world knowledge, your long-term MEMORY.md and your recent daily logs; " +
	"with `query` it searches your memory and past conversations instead and cites where and when each result was written\n" +
	"- action `remember` adds an experience to today's daily log\n" +
	"- action `reflect` reads your long-term MEMORY.md (without content) or replaces it (with content)\n" +
	"- action `update_world` replaces the shared world knowledge of a topic, which every agent sees\n" +
	"\n" +
	"How to use it:\n" +
	"- At the start of a conversation, when earlier context could help, call `recall`; to find something specific " +
	"(a name, a decision, a date), call `recall` with a `query`\n" +
	"- After learning something important about the user or their projects, call `remember`\n" +
	"- At the end of a substantial session, consolidate what you learned with `reflect`: read first, then write the whole file\n" +
	"- When you find facts that matter to every agent, call `update_world`"

// needsMemoryDirective reports whether the default memory directive goes
// into the system message: the agent has memory and no directives folder
// has a directive named memory.
func (a *Agent) needsMemoryDirective() bool {
	if !a.HasMemory() {
		return false
	}
	for _, list := range [...][]Directive{a.SharedDirectives, a.Directives} {
		for _, d := range list {
			if d.Name == "memory" {
				return false
			}
		}
	}
	return true
}

// Package agents owns the Agnx Agent Format (AAF) as agnx-lite reads it: an
// agent is a folder holding agent.yaml plus Markdown prompt parts (SOUL.md,
// SYSTEM_PROMPT.md, INSTRUCTIONS.md). The package loads and validates that
// folder into an immutable [Agent] (with its skills, directives and
// hooks), renders its system message as Agnx does ([Agent.RenderSystem]:
// [PrimeDirectives], prompt parts, "## Directives", the skills list), lists the
// agents folder cheaply ([List] reads names and modification times only, so
// start-up stays fast with hundreds of agents) and writes the embedded
// default agent ([WriteTemplate]).
//
// Every file agent.yaml names must lie inside the agent's folder: it is
// read through an [os.Root], so an absolute path, "..", or a symlink that
// leads out is refused ([ErrOutside]) and no host file can reach the
// model server through a prompt or a tool description. Those files are
// opened without blocking, so a named pipe among them is refused
// ([ErrNotRegular]) instead of hanging a start or reload. [Import] shows an
// archive's [Reach] (model server, executables, network) and refuses a
// risky one unless the user trusts it.
//
// [Principal] names whom a conversation speaks for (the owner, a chat, an
// OpenAI caller, a webhook...); a policy's [SessionAccess] (its sessions
// key) says which of the agent's conversations one of them may read, and
// [Import] counts any widening of it among the risks.
//
// Skills are an agent's own (its skills_dir) and, through
// [Agent.AddSharedSkills], the data dir's shared ones; each is recorded
// at its real folder ([Skill.Dir]), checked to lie in its skills folder,
// which the composition root shows read-only in the agent's sandbox. A
// skill's problems are [*Error]s located by the SKILL.md's own line
// ([Agent.SkillProblems]).
//
// What Agnx accepts loads here too: a prompt file named but missing, a bad
// skill or an oversized directive is a warning ([Agent.Warnings]), not a
// failure. Skills and directives are bounded in count and size, since an
// agent folder may come from anywhere.
//
// Every problem with a file is reported as one [*Error] sentence of the
// form "file:line: what is wrong". The YAML helpers that produce such errors
// ([ParseYAML], [Doc], [YAMLError]) are exported because the agnx.yaml
// loader in package lite uses them too: the conversion of goccy/go-yaml
// errors exists once.
//
// agents is a leaf: it imports the standard library and goccy/go-yaml.
// Nothing here may import runtime, wasmtools or lite. (DESIGN.md had agents
// compile an agent's WASM tools; since wasmtools builds runtime.Tools and
// runtime imports agents, lite does that when it builds an agent.)
//
// # Caveats
//
// Nothing is done at package initialisation: no regular expressions are
// compiled and no tables are built until a function needs them.
package agents

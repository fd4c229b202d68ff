// Package agents owns the Agnx Agent Format (AAF) as agnx-lite reads it: an
// agent is a folder holding agent.yaml plus Markdown prompt parts (SOUL.md,
// SYSTEM_PROMPT.md, INSTRUCTIONS.md). The package loads and validates that
// folder into an immutable [Agent], renders its system prompt, lists the
// agents folder cheaply ([List] reads names and modification times only, so
// start-up stays fast with hundreds of agents) and writes the embedded
// default agent ([WriteTemplate]).
//
// Every problem with a file is reported as one [*Error] sentence of the
// form "file:line: what is wrong". The YAML helpers that produce such errors
// ([ParseYAML], [Doc], [YAMLError]) are exported because the agnx.yaml
// loader in package lite uses them too: the conversion of goccy/go-yaml
// errors exists once.
//
// agents is a leaf: it imports the standard library and goccy/go-yaml (and,
// later, wasmtools to compile an agent's tools on load). Nothing here may
// import runtime or lite.
//
// # Caveats
//
// Nothing is done at package initialisation: no regular expressions are
// compiled and no tables are built until a function needs them.
package agents

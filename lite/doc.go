// Package lite is agnx-lite's composition root: it reads agnx.yaml, opens
// the store, builds the agents' providers and tools, and wires them into the
// runtime loop. Only lite and cmd know the concrete providers and tools.
//
// lite imports runtime, storage, agents, wasmtools and bwrap; nothing below
// it imports lite. Gateways live in lite/<name>.
package lite

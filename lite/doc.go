// Package lite is agnx-lite's composition root: given the configuration
// that lite/config reads, it opens the store, builds the agents' providers
// and tools, and wires them into the runtime loop. Only lite and cmd know
// the concrete providers and tools.
//
// lite imports runtime, storage, agents, wasmtools, bwrap and the packages
// under lite/: config, the subsystems (notify so far), the gateways and
// the clients of outside programs. Only cmd imports lite, and the
// packages under lite/ import one another only downward
// (lite/layering_test.go lists the edges).
package lite

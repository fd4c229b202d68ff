package config

import "github.com/agnx-lite/agnx-lite/runtime/memory"

// WorldMemory is world_memory: in agnx.yaml: Agnx's path, and the
// bounds agnx-lite adds. World memory sits in the data dir, outside every
// workspace and its sandbox.workspace_mb, and every agent with memory
// writes it, so it has caps of its own:
//
//	world_memory:
//	  path: ~/shared/world   # default <data dir>/memory/world
//	  max_file_kb: 32        # one topic (1..64)
//	  max_total_kb: 1024     # every topic together (at least max_file_kb, at most 1048576)
//	  max_topics: 128        # topic files (1..4096)
//
// update_world is refused past them, with a sentence telling the model to
// trim or merge topics; a write that shrinks a topic always passes.
type WorldMemory struct {
	// Path is the folder of world memory; empty: <data dir>/memory/world,
	// as in Agnx. A relative path (or ~/) resolves against the config
	// file's folder.
	Path string `yaml:"path"`
	// MaxFileKB caps one topic, in KiB (1..64).
	MaxFileKB int `yaml:"max_file_kb"`
	// MaxTotalKB caps every topic together, in KiB (at least MaxFileKB,
	// at most 1048576).
	MaxTotalKB int `yaml:"max_total_kb"`
	// MaxTopics caps the number of topic files (1..4096).
	MaxTopics int `yaml:"max_topics"`
}

// maxWorldTotalKB bounds max_total_kb (1 GiB): past that it is no cap.
const maxWorldTotalKB = 1 << 20

// Limits are the bounds for memory.BankOptions; zero fields take the
// defaults there.
func (w WorldMemory) Limits() memory.WorldLimits {
	return memory.WorldLimits{FileBytes: w.MaxFileKB << 10, TotalBytes: int64(w.MaxTotalKB) << 10, Topics: w.MaxTopics}
}

func (c *Config) validateWorldMemory() error {
	w := c.WorldMemory
	file := w.MaxFileKB
	if file == 0 {
		file = memory.DefaultWorldFileBytes >> 10
	}
	switch {
	case w.MaxFileKB < 0 || w.MaxFileKB > memory.MaxContentBytes>>10:
		return c.errorf("world_memory.max_file_kb", "world_memory.max_file_kb %d is out of range 1..%d: one update_world writes at most %d KiB",
			w.MaxFileKB, memory.MaxContentBytes>>10, memory.MaxContentBytes>>10)
	case w.MaxTotalKB < 0 || w.MaxTotalKB > maxWorldTotalKB || (w.MaxTotalKB != 0 && w.MaxTotalKB < file):
		return c.errorf("world_memory.max_total_kb", "world_memory.max_total_kb %d is out of range %d..%d: it must hold at least one full topic (max_file_kb)",
			w.MaxTotalKB, file, maxWorldTotalKB)
	case w.MaxTopics < 0 || w.MaxTopics > memory.MaxWorldTopics:
		return c.errorf("world_memory.max_topics", "world_memory.max_topics %d is out of range 1..%d", w.MaxTopics, memory.MaxWorldTopics)
	}
	return nil
}

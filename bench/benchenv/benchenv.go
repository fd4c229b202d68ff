// Package benchenv is the environment the benchmark programs run
// agnx-lite in: PATH (for bwrap and the tools), its data dir and the fake
// model server, and nothing of the caller's, so that no provider key,
// AGNX_ setting or GOGC of the person running a benchmark reaches the
// daemon or changes what it measures.
package benchenv

import "os"

// Daemon is the environment of an agnx-lite run on data dir home against
// the Ollama at ollama, plus extra ("KEY=value") settings the benchmark
// chose itself.
func Daemon(home, ollama string, extra ...string) []string {
	return append([]string{"PATH=" + os.Getenv("PATH"), "AGNX_LITE_HOME=" + home, "OLLAMA_HOST=" + ollama}, extra...)
}

package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// serve with the default agent's Ollama down says so at start, in one line
// with the fix, and still serves.
func TestCLI_ServeWarnsWhenProviderIsDown(t *testing.T) {
	c := newCLI(t)
	t.Setenv("OLLAMA_HOST", "127.0.0.1:1")
	errb := newSyncBuffer()
	done := make(chan int, 1)
	go func() {
		g := &globals{stdin: bytes.NewReader(nil), stdout: &bytes.Buffer{}, stderr: errb, plainWarnings: true}
		done <- runWith(g, c.args([]string{"serve"}))
	}()
	errb.waitFor(t, "warning: agent assistant needs ollama http://127.0.0.1:1")
	assert.Contains(t, errb.String(), `fix: start it with "ollama serve"`)
	assert.Contains(t, errb.String(), "or give it another provider (spec.model in ")

	code, out, errs := c.run("serve", "status")
	require.Equal(t, 0, code, "ready did not wait for the probe: %s", errs)
	assert.Contains(t, out, "pid")
	code, _, errs = c.run("serve", "stop")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, 0, <-done, errb.String())
}

// serve with the model missing names the ollama pull that fixes it; with
// everything there, it says nothing.
func TestCLI_ServeProbe(t *testing.T) {
	probe := func(c *cli) string {
		code, _, errs := c.run("init")
		require.Equal(t, 0, code, errs)
		cfg, err := (&globals{config: c.cfg, dataDir: c.dir}).cfg()
		require.NoError(t, err)
		var b bytes.Buffer
		g := &globals{stderr: &b, plainWarnings: true}
		warnProvider(t.Context(), g, cfg, g.logger())
		return b.String()
	}
	c := newCLI(t)
	c.fake.Models = []string{"llama3:8b"} // before its first request
	out := probe(c)
	assert.Contains(t, out, "reachable, but missing qwen3:1.7b; fix: ollama pull qwen3:1.7b (or, from here: agnx-lite model pull qwen3:1.7b), or give it another provider")
	assert.Equal(t, 1, strings.Count(out, "\n"), "one line")

	assert.Empty(t, probe(newCLI(t)), "the fake Ollama has the model: nothing to say")
}

func TestGlobals_ProgName(t *testing.T) {
	assert.Equal(t, "bin/agnx-lite", (&globals{prog: "bin/agnx-lite"}).progName())
	assert.Equal(t, "agnx-lite", (&globals{prog: "agnx-lite"}).progName())
	assert.Equal(t, "agnx-lite", (&globals{}).progName())
}

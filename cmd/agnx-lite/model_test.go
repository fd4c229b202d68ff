package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/agnx-lite/agnx-lite/lite/doctor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakePull is an Ollama that streams a pull as Ollama does
// (application/x-ndjson), for models it knows, and records what it was
// asked to pull.
type fakePull struct {
	mu     sync.Mutex
	pulled []string
}

func (f *fakePull) serve(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model string `json:"model"`
		}
		if r.URL.Path == "/api/tags" { // doctor's probe: Ollama has no model yet
			_, _ = w.Write([]byte(`{"models":[]}`))
			return
		}
		if r.URL.Path != "/api/pull" || json.NewDecoder(r.Body).Decode(&req) != nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/x-ndjson")
		lines := []string{`{"status":"pulling manifest"}`}
		if req.Model == "nosuch" {
			lines = append(lines, `{"error":"pull model manifest: file does not exist"}`)
		} else {
			lines = append(lines,
				`{"status":"pulling 3f2a5e1b0c44","digest":"sha256:3f2a5e1b0c44","total":2048,"completed":1024}`,
				`{"status":"pulling 3f2a5e1b0c44","digest":"sha256:3f2a5e1b0c44","total":2048,"completed":2048}`,
				`{"status":"verifying sha256 digest"}`, `{"status":"writing manifest"}`, `{"status":"success"}`)
			f.mu.Lock()
			f.pulled = append(f.pulled, req.Model)
			f.mu.Unlock()
		}
		for _, l := range lines {
			_, _ = w.Write([]byte(l + "\n"))
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestCLI_ModelPull(t *testing.T) {
	c := newCLI(t)
	code, _, _ := c.run("init")
	require.Equal(t, 0, code)
	f := &fakePull{}
	t.Setenv("OLLAMA_HOST", f.serve(t).URL)

	code, out, errs := c.run("model", "pull")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, "pulled qwen3:1.7b\n", out, "the default agent's model")
	assert.Equal(t, "pulling manifest\npulling 3f2a5e1b0c44\nverifying sha256 digest\nwriting manifest\n", errs,
		"not a terminal: a line per step")

	code, out, errs = c.run("model", "pull", "llama3.2:1b", "-q")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, "pulled llama3.2:1b\n", out)
	assert.Empty(t, errs, "-q: no progress")

	code, _, errs = c.run("model", "pull", "nosuch")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "could not pull nosuch: pull model manifest: file does not exist")

	code, _, errs = c.run("model", "list")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "model pull [NAME]")
	assert.Equal(t, []string{"qwen3:1.7b", "llama3.2:1b"}, f.pulled)
}

// init offers to pull what Ollama lacks; y (or Enter) pulls, anything else
// says how to do it later.
func TestInit_OfferPull(t *testing.T) {
	f := &fakePull{}
	base := f.serve(t).URL
	pull := &doctor.ModelPull{Base: base, Models: []string{"qwen3:1.7b"}}
	for _, tc := range []struct {
		answer string
		pulled bool
	}{{"\n", true}, {"y\n", true}, {"n\n", false}, {"", false}} {
		f.pulled = nil
		var out, errb bytes.Buffer
		g := &globals{stdin: strings.NewReader(tc.answer), stdout: &out, stderr: &errb}
		offerPull(g, pull)
		assert.Contains(t, out.String(), "pull qwen3:1.7b now through Ollama at "+base+"? [Y/n] ")
		if tc.pulled {
			assert.Equal(t, []string{"qwen3:1.7b"}, f.pulled, "%q", tc.answer)
			assert.Contains(t, out.String(), "pulled qwen3:1.7b\n")
			assert.Contains(t, errb.String(), "writing manifest\n")
			continue
		}
		assert.Empty(t, f.pulled, "%q", tc.answer)
		if tc.answer != "" {
			assert.Contains(t, out.String(), "not pulled: agnx-lite model pull qwen3:1.7b does it later")
		}
	}
}

func TestReadAnswer(t *testing.T) {
	r := strings.NewReader(" Yes \nnext line\n")
	a, ok := readAnswer(r)
	assert.True(t, ok)
	assert.Equal(t, "Yes", a)
	a, ok = readAnswer(r)
	assert.Equal(t, "next line", a, "nothing after the answer was taken")
	assert.True(t, ok)
	_, ok = readAnswer(r)
	assert.False(t, ok)
	a, _ = readAnswer(strings.NewReader(strings.Repeat("x", 1000)))
	assert.Len(t, a, 256)
}

// On a terminal init checks the new agent's model with doctor's probe,
// and offers to pull the one Ollama lacks.
func TestInit_CheckModelOffersPull(t *testing.T) {
	c := newCLI(t)
	code, _, _ := c.run("init")
	require.Equal(t, 0, code)
	f := &fakePull{}
	t.Setenv("OLLAMA_HOST", f.serve(t).URL)
	var out, errb bytes.Buffer
	g := &globals{stdin: strings.NewReader("y\n"), stdout: &out, stderr: &errb, dataDir: c.dir, config: c.cfg}
	cfg, err := g.cfg()
	require.NoError(t, err)
	checkModel(g, cfg)
	assert.Contains(t, out.String(), "check: agent assistant needs ollama ")
	assert.Contains(t, out.String(), "reachable, but missing qwen3:1.7b\n  fix: ollama pull qwen3:1.7b (or, from here: agnx-lite model pull qwen3:1.7b)")
	assert.Contains(t, out.String(), "? [Y/n] pulled qwen3:1.7b\n")
	assert.Equal(t, []string{"qwen3:1.7b"}, f.pulled)
}

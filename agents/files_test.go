package agents

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// secretText is what the planted secret file holds; no loaded agent may
// carry it.
const secretText = "OPENAI_API_KEY=sk-planted-secret"

// plantSecret writes a secret file beside (outside) the agent folder dir,
// as the data dir's agnx.env is beside the agents folder.
func plantSecret(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(filepath.Dir(dir), "agnx.env")
	require.NoError(t, os.WriteFile(p, []byte(secretText), 0o600))
	return p
}

func TestLoad_FilesStayInsideTheFolder(t *testing.T) {
	const model = "spec:\n  model:\n    provider: ollama\n    name: m\n"
	cases := []struct {
		name  string
		spec  string            // after model, with SECRET for the secret's absolute path
		links map[string]string // link name -> target (OUT: the secret)
		line  int               // 0: the error names the file itself
		want  string
	}{
		{"absolute soul", "  soul: SECRET\n", nil, 9, "spec.soul"},
		{"climbing soul", "  soul: ../agnx.env\n", nil, 9, `spec.soul "../agnx.env" leads outside`},
		{"etc shadow", "  instructions: /etc/shadow\n", nil, 9, `spec.instructions "/etc/shadow" leads outside`},
		{"dot dot inside the path", "  system_prompt: prompts/../../agnx.env\n", nil, 9, "spec.system_prompt"},
		{"linked named prompt", "  soul: ./SOUL.md\n", map[string]string{"SOUL.md": "OUT"}, 9, "spec.soul ./SOUL.md is a link that leads outside"},
		{"linked conventional prompt", "", map[string]string{"INSTRUCTIONS.md": "OUT"}, 0, "INSTRUCTIONS.md: is a link that leads outside"},
		{"linked folder", "  system_prompt: prompts/system.md\n", map[string]string{"prompts": "DIR"}, 9, "spec.system_prompt prompts/system.md is a link"},
		{"relative link out", "", map[string]string{"SOUL.md": "../agnx.env"}, 0, "SOUL.md: is a link that leads outside"},
		{"linked agent.yaml", "", map[string]string{FileName: "OUT"}, 0, "agent.yaml: is a link that leads outside"},
		{"linked cli command", "  tools:\n    - {type: cli, name: x, command: tool}\n", map[string]string{"tool": "/bin/sh"}, 10, "spec.tools[0].command \"tool\" is a link"},
		{"climbing readme", "  tools:\n    - {type: cli, name: x, command: run, readme: ../agnx.env}\n", nil, 10, "spec.tools[0].readme"},
		{"linked readme", "  tools:\n    - {type: cli, name: x, command: run, readme: README.md}\n", map[string]string{"README.md": "OUT"}, 10, "spec.tools[0].readme \"README.md\" is a link"},
		{"absolute wasm path", "  tools:\n    - {type: wasm, name: x, path: /tmp/x/tool.yaml}\n", nil, 10, "spec.tools[0].path"},
		{"linked wasm path", "  tools:\n    - {type: wasm, name: x, path: tools/x}\n", map[string]string{"tools": "DIR"}, 10, "spec.tools[0].path \"tools/x\" is a link"},
		{"climbing skills", "  skills_dir: ../skills\n", nil, 9, "spec.skills_dir"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeAgent(t, map[string]string{"run": "#!/bin/sh\n"})
			secret := plantSecret(t, dir)
			outDir := filepath.Join(filepath.Dir(dir), "outside")
			require.NoError(t, os.MkdirAll(filepath.Join(outDir, "x"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(outDir, "system.md"), []byte(secretText), 0o644))
			yaml := header + model + strings.ReplaceAll(tc.spec, "SECRET", secret)
			if tc.links[FileName] == "" {
				require.NoError(t, os.WriteFile(filepath.Join(dir, FileName), []byte(yaml), 0o644))
			}
			for name, target := range tc.links {
				switch target {
				case "OUT":
					target = secret
				case "DIR":
					target = outDir
				}
				require.NoError(t, os.Symlink(target, filepath.Join(dir, name)))
			}

			a, err := Load(dir)
			require.Error(t, err)
			assert.Nil(t, a)
			var e *Error
			require.ErrorAs(t, err, &e, "a refused file is a file:line error: %v", err)
			assert.Equal(t, tc.line, e.Line, err.Error())
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), "sk-planted")
		})
	}
}

func TestLoad_LinkInsideTheFolderIsFollowed(t *testing.T) {
	dir := writeAgent(t, map[string]string{
		FileName:          header + "spec:\n  model:\n    provider: ollama\n    name: m\n  soul: ./SOUL.md\n",
		"prompts/soul.md": "I am the soul.",
	})
	require.NoError(t, os.Symlink("prompts/soul.md", filepath.Join(dir, "SOUL.md")))
	a, err := Load(dir)
	require.NoError(t, err)
	assert.Equal(t, "I am the soul.", a.Soul)
}

func TestAgent_ReadFile(t *testing.T) {
	dir := writeAgent(t, map[string]string{"tools/x/README.md": "read me"})
	secret := plantSecret(t, dir)
	require.NoError(t, os.Symlink(secret, filepath.Join(dir, "tools", "x", "out.md")))
	a := &Agent{Dir: dir}

	data, err := a.ReadFile("tools/x/README.md")
	require.NoError(t, err)
	assert.Equal(t, "read me", string(data))
	data, err = a.ReadFile(filepath.Join(dir, "tools/x/README.md"))
	require.NoError(t, err, "an absolute path under the folder is fine")
	assert.Equal(t, "read me", string(data))

	for _, name := range []string{"tools/x/out.md", secret, "../agnx.env", "/etc/shadow"} {
		_, err := a.ReadFile(name)
		assert.True(t, errors.Is(err, ErrOutside), "%s: %v", name, err)
		_, err = a.StatFile(name)
		assert.True(t, errors.Is(err, ErrOutside), "%s: %v", name, err)
	}
	st, err := a.StatFile("tools/x/README.md")
	require.NoError(t, err)
	assert.True(t, st.Mode().IsRegular())
}

// loadWithin runs Load on dir and fails the test if it has not returned
// within a generous time: opening a FIFO to read blocks until a writer
// comes, which the watchdog then supplies so the goroutine ends.
func loadWithin(t *testing.T, dir string, fifos ...string) (*Agent, error) {
	t.Helper()
	type result struct {
		a   *Agent
		err error
	}
	done := make(chan result, 1)
	go func() {
		a, err := Load(dir)
		done <- result{a, err}
	}()
	select {
	case r := <-done:
		return r.a, r.err
	case <-time.After(20 * time.Second):
		for _, p := range fifos {
			if w, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				w.Close()
			}
		}
		<-done
		t.Fatal("Load blocked on a named pipe")
		return nil, nil
	}
}

func TestLoad_NamedPipeDoesNotBlock(t *testing.T) {
	const model = "spec:\n  model:\n    provider: ollama\n    name: m\n"
	cases := []struct {
		name, spec, fifo string
		line             int
		want             string
	}{
		{"conventional soul", "", "SOUL.md", 0, "SOUL.md: is a named pipe, device or socket, not a regular file"},
		{"named prompt", "  instructions: prompts/i.md\n", "prompts/i.md", 9, "spec.instructions prompts/i.md is a named pipe"},
		{"agent.yaml", "", FileName, 0, "agent.yaml: is a named pipe"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeAgent(t, map[string]string{"prompts/x.md": "x"})
			if tc.fifo != FileName {
				require.NoError(t, os.WriteFile(filepath.Join(dir, FileName), []byte(header+model+tc.spec), 0o644))
			}
			fifo := filepath.Join(dir, tc.fifo)
			require.NoError(t, syscall.Mkfifo(fifo, 0o644))
			a, err := loadWithin(t, dir, fifo)
			assert.Nil(t, a)
			var e *Error
			require.ErrorAs(t, err, &e, "a named pipe is a file:line error: %v", err)
			assert.Equal(t, tc.line, e.Line, err.Error())
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// A tool's readme that is a named pipe is left to the code that builds
// the tool (which reads it through ReadFile), but checking it at load
// must not block, and neither may StatFile.
func TestLoad_NamedPipeToolFile(t *testing.T) {
	dir := writeAgent(t, map[string]string{
		FileName: header + "spec:\n  model:\n    provider: ollama\n    name: m\n" +
			"  tools:\n    - {type: cli, name: x, command: run, readme: README.md}\n",
		"run": "#!/bin/sh\n",
	})
	fifo := filepath.Join(dir, "README.md")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	a, err := loadWithin(t, dir, fifo)
	require.NoError(t, err)
	_, err = a.StatFile("README.md")
	assert.ErrorIs(t, err, ErrNotRegular)
	_, err = a.ReadFile("README.md")
	assert.ErrorIs(t, err, ErrNotRegular)
	st, err := a.StatFile(".")
	require.NoError(t, err, "a folder can still be looked at")
	assert.True(t, st.IsDir())
}

// TestToolRefs: the text check and the open check go over the same list,
// and a command is a file only for a CLI tool.
func TestToolRefs(t *testing.T) {
	assert.Equal(t, []fileRef{{"spec.tools[2].readme", "R.md"}, {"spec.tools[2].path", ""}, {"spec.tools[2].command", "run"}},
		toolRefs(2, ToolRef{Type: "cli", Command: "run", Readme: "R.md"}))
	assert.Equal(t, []fileRef{{"spec.tools[0].readme", ""}, {"spec.tools[0].path", "tools/x"}},
		toolRefs(0, ToolRef{Type: "wasm", Command: "not a file", Path: "tools/x"}))
}

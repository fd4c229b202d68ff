package agents

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const specYAML = header + "spec:\n  model:\n    provider: ollama\n    name: qwen3:1.7b\n  soul: ./SOUL.md\n"

// makeAgent writes an agent called assistant with files in subfolders, a
// tools/ folder, an executable, a link inside it and old times.
func makeAgent(t *testing.T, agentsDir string) string {
	t.Helper()
	dir := filepath.Join(agentsDir, "assistant")
	files := map[string]string{
		FileName:                  specYAML,
		"SOUL.md":                 "You are helpful.\n",
		"skills/notes/SKILL.md":   "---\nname: notes\n---\nTake notes.\n",
		"tools/weather/run":       "#!/bin/sh\necho sunny\n",
		"tools/weather/README.md": "Weather.\n",
		"memory/daily/2024.md":    "a day\n",
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	require.NoError(t, os.Chmod(filepath.Join(dir, "tools/weather/run"), 0o750))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "empty"), 0o700))
	require.NoError(t, os.Symlink("../memory/daily/2024.md", filepath.Join(dir, "skills/today.md")))
	old := time.Date(2021, 3, 4, 5, 6, 7, 800, time.UTC)
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink != 0 {
			return err
		}
		return os.Chtimes(p, old, old)
	}))
	return dir
}

type fileDesc struct {
	Mode    fs.FileMode
	Content string
	ModTime time.Time
}

// tree describes every file under dir, folder times included.
func tree(t *testing.T, dir string) map[string]fileDesc {
	t.Helper()
	out := map[string]fileDesc{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		rel, _ := filepath.Rel(dir, p)
		info, err := os.Lstat(p)
		require.NoError(t, err)
		fd := fileDesc{Mode: info.Mode()}
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			fd.Content, err = os.Readlink(p)
		case info.Mode().IsRegular():
			var b []byte
			b, err = os.ReadFile(p)
			fd.Content, fd.ModTime = string(b), info.ModTime()
		default:
			fd.ModTime = info.ModTime()
		}
		out[rel] = fd
		return err
	}))
	return out
}

func exportAgent(t *testing.T, dir string, opts ExportOptions) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, Export(&buf, dir, opts))
	return buf.Bytes()
}

// assertClean checks that a refused import left nothing in agentsDir.
func assertClean(t *testing.T, agentsDir string) {
	t.Helper()
	des, err := os.ReadDir(agentsDir)
	require.NoError(t, err)
	assert.Empty(t, des, "a refused import leaves nothing behind")
}

func TestExportImport_RoundTrip(t *testing.T) {
	src := makeAgent(t, t.TempDir())
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	opts := ExportOptions{Version: "1.2.3", Now: func() time.Time { return now }}
	data := exportAgent(t, src, opts)
	assert.Equal(t, data, exportAgent(t, src, opts), "the same folder exports to the same bytes")

	dst := t.TempDir()
	res, err := Import(bytes.NewReader(data), dst, ImportOptions{})
	require.NoError(t, err)
	assert.Equal(t, "assistant", res.Name)
	assert.Equal(t, filepath.Join(dst, "assistant"), res.Dir)
	assert.False(t, res.Replaced)
	assert.Empty(t, res.Sessions)
	require.NotNil(t, res.Manifest)
	assert.Equal(t, Manifest{Format: ExportFormat, Agent: "assistant", Version: "1.2.3", Created: now, Sessions: []string{}}, *res.Manifest)

	assert.Equal(t, tree(t, src), tree(t, res.Dir), "files, modes, links and times are kept")
	assert.NoFileExists(t, filepath.Join(res.Dir, ManifestName))
	des, err := os.ReadDir(dst)
	require.NoError(t, err)
	require.Len(t, des, 1, "no temporary folder is left")
	_, err = Load(res.Dir)
	require.NoError(t, err)
}

func TestExportImport_Sessions(t *testing.T) {
	src := makeAgent(t, t.TempDir())
	streams := map[string]string{"a1": `{"seq":1,"type":"session_start"}` + "\n", "b2": "x\ny\n"}
	var sessions []SessionFile
	for _, id := range []string{"a1", "b2"} {
		s := streams[id]
		sessions = append(sessions, SessionFile{ID: id, Size: int64(len(s)),
			Open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(s)), nil }})
	}
	data := exportAgent(t, src, ExportOptions{Sessions: sessions})

	res, err := Import(bytes.NewReader(data), t.TempDir(), ImportOptions{})
	require.NoError(t, err)
	assert.Equal(t, []string{"sessions/a1.jsonl", "sessions/b2.jsonl"}, res.Manifest.Sessions)
	require.Len(t, res.Sessions, 2)
	for i, id := range []string{"a1", "b2"} {
		b, err := os.ReadFile(res.Sessions[i])
		require.NoError(t, err)
		assert.Equal(t, streams[id], string(b))
	}
	assert.NoDirExists(t, filepath.Join(res.Dir, "sessions"), "streams are not part of the agent")
	require.NoError(t, res.Close())
	assert.NoFileExists(t, res.Sessions[0])
	des, _ := os.ReadDir(filepath.Dir(res.Dir))
	assert.Len(t, des, 1)
}

func TestImport_ExistingAgent(t *testing.T) {
	data := exportAgent(t, makeAgent(t, t.TempDir()), ExportOptions{})
	dst := t.TempDir()
	old := filepath.Join(dst, "assistant")
	require.NoError(t, os.MkdirAll(old, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(old, "mine.txt"), []byte("keep"), 0o644))

	_, err := Import(bytes.NewReader(data), dst, ImportOptions{})
	require.ErrorIs(t, err, ErrAgentExists)
	assert.Contains(t, err.Error(), `agent "assistant" already exists`)
	assert.Contains(t, err.Error(), "--force")
	assert.FileExists(t, filepath.Join(old, "mine.txt"), "nothing is overwritten without Force")
	des, _ := os.ReadDir(dst)
	assert.Len(t, des, 1)

	res, err := Import(bytes.NewReader(data), dst, ImportOptions{Force: true})
	require.NoError(t, err)
	assert.True(t, res.Replaced)
	assert.NoFileExists(t, filepath.Join(old, "mine.txt"), "the old folder is replaced as a whole")
	assert.FileExists(t, filepath.Join(old, FileName))
	des, _ = os.ReadDir(dst)
	assert.Len(t, des, 1)
}

func TestImport_InvalidAgent(t *testing.T) {
	data := tgz(t,
		dirEntry("assistant/"),
		fileEntry("assistant/"+FileName, header+"spec:\n  model:\n    provider: olama\n    name: m\n"))
	dst := t.TempDir()
	_, err := Import(bytes.NewReader(data), dst, ImportOptions{})
	require.Error(t, err)
	assert.Regexp(t, `^import: the agent is invalid: assistant/agent.yaml:7: spec.model.provider "olama" is not one of`, err.Error())
	var e *Error
	assert.True(t, errors.As(err, &e))
	assertClean(t, dst)

	_, err = Import(bytes.NewReader(tgz(t, fileEntry("assistant/SOUL.md", "hi"))), dst, ImportOptions{})
	assert.EqualError(t, err, `import: the archive's folder "assistant" has no agent.yaml: it is not an agent`)
	assertClean(t, dst)
}

func TestExport_Refuses(t *testing.T) {
	src := makeAgent(t, t.TempDir())
	require.NoError(t, os.Symlink("/etc/passwd", filepath.Join(src, "memory", "pw")))
	err := Export(io.Discard, src, ExportOptions{})
	assert.EqualError(t, err, "export: assistant/memory/pw is a link to /etc/passwd, outside the folder (or to nothing); replace it with a copy of what it points to")
	require.NoError(t, os.Remove(filepath.Join(src, "memory", "pw")))

	require.NoError(t, syscall.Mkfifo(filepath.Join(src, "pipe"), 0o644))
	var warnings []string
	data := exportAgent(t, src, ExportOptions{Warn: func(m string) { warnings = append(warnings, m) }})
	assert.Equal(t, []string{"export: left out assistant/pipe: it is not a regular file, folder or link"}, warnings)
	res, err := Import(bytes.NewReader(data), t.TempDir(), ImportOptions{})
	require.NoError(t, err)
	assert.NoFileExists(t, filepath.Join(res.Dir, "pipe"))

	err = Export(io.Discard, src, ExportOptions{Limits: Limits{MaxFiles: 3}})
	assert.ErrorContains(t, err, "is past the limit of 3 files")
	err = Export(io.Discard, src, ExportOptions{Sessions: []SessionFile{{ID: "../x"}}})
	assert.EqualError(t, err, `export: session id "../x" cannot be a file name`)
}

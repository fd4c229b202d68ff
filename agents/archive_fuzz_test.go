package agents

import (
	"archive/tar"
	"bytes"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// seedArchives are the archives FuzzImport starts from; testdata/archives
// holds them as written by TestWriteArchiveSeeds.
func seedArchives(t *testing.T) map[string][]byte {
	dir := filepath.Join(t.TempDir(), "agents")
	src := makeAgent(t, dir)
	s := `{"seq":1,"timestamp":"2025-01-02T03:04:05Z","type":"session_start","agent":"assistant"}` + "\n"
	var good bytes.Buffer
	err := Export(&good, src, ExportOptions{Version: "seed", Now: func() time.Time { return time.Unix(1700000000, 0) },
		Sessions: []SessionFile{{ID: "s1", Size: int64(len(s)), Open: func() (io.ReadCloser, error) {
			return io.NopCloser(strings.NewReader(s)), nil
		}}}})
	if err != nil {
		t.Fatal(err)
	}
	evil := tgz(t, append(goodStart(),
		tarLink(tar.TypeSymlink, "assistant/here", "."),
		tarLink(tar.TypeSymlink, "assistant/up", "here/../sibling"),
		tarLink(tar.TypeLink, "assistant/h", "assistant/SOUL.md"),
		fileEntry("assistant/../evil", "x"))...)
	return map[string][]byte{"agent.tar.gz": good.Bytes(), "evil.tar.gz": evil}
}

// TestWriteArchiveSeeds rewrites testdata/archives when
// AGNX_WRITE_TESTDATA is set.
func TestWriteArchiveSeeds(t *testing.T) {
	if os.Getenv("AGNX_WRITE_TESTDATA") == "" {
		t.Skip("set AGNX_WRITE_TESTDATA=1 to rewrite testdata/archives")
	}
	for name, data := range seedArchives(t) {
		if err := os.WriteFile(filepath.Join("testdata", "archives", name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// FuzzImport checks that no archive panics Import, that nothing is ever
// written beside the agents dir, that a refused archive leaves nothing,
// and that an accepted one holds no link leading out of its folder.
func FuzzImport(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/archives/*.tar.gz")
	for _, s := range seeds {
		data, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add(tgz(f, goodStart()...))
	lim := Limits{MaxFiles: 64, MaxFileSize: 1 << 20, MaxTotalSize: 4 << 20}
	f.Fuzz(func(t *testing.T, data []byte) {
		parent := t.TempDir()
		agentsDir := filepath.Join(parent, "agents")
		res, err := Import(bytes.NewReader(data), agentsDir, ImportOptions{Force: true, Limits: lim})
		if des, _ := os.ReadDir(parent); len(des) != 1 {
			t.Fatalf("Import wrote beside the agents dir: %v", des)
		}
		if err == nil {
			if err := res.Close(); err != nil {
				t.Fatal(err)
			}
		}
		des, _ := os.ReadDir(agentsDir)
		if err != nil {
			if len(des) != 0 {
				t.Fatalf("refused (%v) but left %v", err, des)
			}
			return
		}
		if len(des) != 1 || filepath.Dir(res.Dir) != agentsDir {
			t.Fatalf("imported %s, agents dir holds %v", res.Dir, des)
		}
		checkLinksInside(t, res.Dir)
	})
}

// checkLinksInside fails if a symlink under dir resolves out of it.
func checkLinksInside(t *testing.T, dir string) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink == 0 {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if _, err := root.Stat(rel); err != nil {
			t.Fatalf("link %s leads out of the folder: %v", rel, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

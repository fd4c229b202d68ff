package agents

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tarEntry is one entry of a hand-made archive.
type tarEntry struct {
	hdr  tar.Header
	body string
}

func dirEntry(name string) tarEntry {
	return tarEntry{hdr: tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: 0o755}}
}

func fileEntry(name, body string) tarEntry {
	return tarEntry{hdr: tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(body))}, body: body}
}

func tarLink(typ byte, name, target string) tarEntry {
	return tarEntry{hdr: tar.Header{Typeflag: typ, Name: name, Linkname: target, Mode: 0o777}}
}

// tgz builds a gzip'd tar of entries, in order.
func tgz(t testing.TB, entries ...tarEntry) []byte {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		h := e.hdr
		if h.Typeflag != tar.TypeXGlobalHeader {
			h.ModTime = time.Unix(1700000000, 0)
		}
		require.NoError(t, tw.WriteHeader(&h))
		_, err := io.WriteString(tw, e.body)
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	require.NoError(t, gz.Close())
	return buf.Bytes()
}

// goodStart is a valid agent's first entries, so that only the entry
// under test makes an archive bad.
func goodStart() []tarEntry {
	return []tarEntry{dirEntry("assistant/"), fileEntry("assistant/"+FileName, specYAML), fileEntry("assistant/SOUL.md", "hi")}
}

// importIn imports data into a fresh agents dir inside a fresh parent and
// checks that nothing was left in either.
func importIn(t *testing.T, data []byte, opts ImportOptions) error {
	t.Helper()
	return importFrom(t, bytes.NewReader(data), opts)
}

// importFrom is importIn reading r.
func importFrom(t *testing.T, r io.Reader, opts ImportOptions) error {
	t.Helper()
	parent := t.TempDir()
	agentsDir := filepath.Join(parent, "agents")
	_, err := Import(r, agentsDir, opts)
	assertClean(t, agentsDir)
	des, derr := os.ReadDir(parent)
	require.NoError(t, derr)
	assert.Len(t, des, 1, "nothing is written beside the agents dir")
	return err
}

func TestImport_RefusesMaliciousArchives(t *testing.T) {
	many := goodStart()
	for i := range 20 {
		many = append(many, fileEntry("assistant/f"+strconv.Itoa(i), "0123456789"))
	}
	tests := []struct {
		name    string
		entries []tarEntry
		opts    ImportOptions
		want    string
	}{
		{"dot-dot", []tarEntry{fileEntry("../evil", "x")}, ImportOptions{}, `"../evil" leads out of the folder with ".."`},
		{"dot-dot later", []tarEntry{fileEntry("assistant/../../evil", "x")}, ImportOptions{}, `"assistant/../../evil" leads out`},
		{"absolute", []tarEntry{fileEntry("/etc/evil", "x")}, ImportOptions{}, `"/etc/evil" has an absolute path`},
		{"inner dot-dot", []tarEntry{fileEntry("a/../../evil", "x")}, ImportOptions{}, `"a/../../evil" leads out`},
		{"two folders", []tarEntry{dirEntry("other/"), fileEntry("other/x", "x")}, ImportOptions{}, `"other/" is outside the archive's single folder "assistant"`},
		{"no folder", []tarEntry{fileEntry("agent.yaml", "x")}, ImportOptions{}, `"agent.yaml" is not inside a folder`},
		{"symlink to passwd", []tarEntry{tarLink(tar.TypeSymlink, "assistant/pw", "/etc/passwd")}, ImportOptions{}, `"assistant/pw" is a link to "/etc/passwd", outside`},
		{"symlink up", []tarEntry{tarLink(tar.TypeSymlink, "assistant/x", "../../outside")}, ImportOptions{}, `"assistant/x" is a link to "../../outside", outside`},
		{"symlink through a symlink", []tarEntry{tarLink(tar.TypeSymlink, "assistant/here", "."),
			tarLink(tar.TypeSymlink, "assistant/up", "here/../sibling")}, ImportOptions{}, `"assistant/up" is a link to "here/../sibling", which leads out`},
		{"dangling symlink", []tarEntry{tarLink(tar.TypeSymlink, "assistant/gone", "nothing")}, ImportOptions{}, `"assistant/gone" is a link to "nothing", which leads out of the agent's folder or to nothing`},
		{"hard link out", []tarEntry{tarLink(tar.TypeLink, "assistant/h", "/etc/passwd")}, ImportOptions{}, `"assistant/h" is a hard link to "/etc/passwd", outside`},
		{"hard link up", []tarEntry{tarLink(tar.TypeLink, "assistant/h", "assistant/../../x")}, ImportOptions{}, `"assistant/h" is a hard link to "assistant/../../x", outside`},
		{"hard link to nothing", []tarEntry{tarLink(tar.TypeLink, "assistant/h", "assistant/nope")}, ImportOptions{}, `"assistant/h" is a hard link to "assistant/nope", which is not a file`},
		{"fifo", []tarEntry{{hdr: tar.Header{Typeflag: tar.TypeFifo, Name: "assistant/p", Mode: 0o644}}}, ImportOptions{}, `"assistant/p" is a device, fifo`},
		{"device", []tarEntry{{hdr: tar.Header{Typeflag: tar.TypeChar, Name: "assistant/null", Mode: 0o666, Devmajor: 1, Devminor: 3}}}, ImportOptions{}, `"assistant/null" is a device`},
		{"duplicate", []tarEntry{fileEntry("assistant/SOUL.md", "again")}, ImportOptions{}, `"assistant/SOUL.md" appears twice`},
		{"too many files", many[3:], ImportOptions{Limits: Limits{MaxFiles: 10}}, `"assistant/f7" is past the limit of 10 entries`},
		{"big file", []tarEntry{fileEntry("assistant/big", string(make([]byte, 2<<20)))}, ImportOptions{Limits: Limits{MaxFileSize: 1 << 20}}, `"assistant/big" is larger than 1 MiB`},
		{"big total", many[3:], ImportOptions{Limits: Limits{MaxTotalSize: 300}}, `takes the archive past 300 bytes unpacked`},
		{"manifest of another agent", []tarEntry{fileEntry("assistant/"+ManifestName, `{"format":1,"agent":"other"}`)}, ImportOptions{}, `names the agent "other"`},
		{"manifest of a bad session", []tarEntry{fileEntry("assistant/"+ManifestName, `{"format":1,"agent":"assistant","sessions":["../x"]}`)}, ImportOptions{}, `lists the session "../x"`},
		{"missing session", []tarEntry{fileEntry("assistant/"+ManifestName, `{"format":1,"agent":"assistant","sessions":["sessions/a.jsonl"]}`)}, ImportOptions{}, `lists the session "sessions/a.jsonl", which the archive does not hold`},
		{"newer format", []tarEntry{fileEntry("assistant/"+ManifestName, `{"format":99,"agent":"assistant"}`)}, ImportOptions{}, `has format 99, newer than this agnx-lite reads`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := importIn(t, tgz(t, append(goodStart(), tc.entries...)...), tc.opts)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			var ae *ArchiveError
			assert.True(t, errors.As(err, &ae), "%T", err)
		})
	}
}

func TestImport_RefusesBadNamesAndStreams(t *testing.T) {
	for _, name := range []string{"../evil", "/etc/evil", "a/../../evil"} {
		err := importIn(t, tgz(t, fileEntry(name, "x"), fileEntry("assistant/"+FileName, specYAML)), ImportOptions{})
		assert.ErrorContains(t, err, fmt.Sprintf("archive entry %q", name), "as the first entry")
	}
	err := importIn(t, tgz(t, dirEntry("bad.name/"), fileEntry("bad.name/"+FileName, specYAML)), ImportOptions{})
	assert.ErrorContains(t, err, `archive entry "bad.name/" is in the folder "bad.name", which is not a valid agent name`)

	err = importIn(t, []byte("not a tarball"), ImportOptions{})
	assert.EqualError(t, err, `import: the file is not a gzip'd tar archive: make one with "agnx-lite agent export NAME > NAME.tar.gz"`)

	data := tgz(t, goodStart()...)
	err = importIn(t, data[:len(data)-30], ImportOptions{})
	assert.ErrorContains(t, err, "import: the archive is damaged")

	err = importIn(t, tgz(t), ImportOptions{})
	assert.ErrorContains(t, err, "the archive holds no agent folder")

	// Entries that are no files at all still count against the unpacked
	// size: pax global headers are skipped, yet the stream is cut off.
	var globals []tarEntry
	for i := range 3000 {
		globals = append(globals, tarEntry{hdr: tar.Header{Typeflag: tar.TypeXGlobalHeader,
			PAXRecords: map[string]string{"comment": fmt.Sprint(i, string(make([]byte, 600)))}}})
	}
	err = importIn(t, tgz(t, append(goodStart(), globals...)...), ImportOptions{Limits: Limits{MaxFiles: 5, MaxTotalSize: 1024}})
	assert.ErrorContains(t, err, "import: the archive unpacks to more than 1 KiB")
}

// A gzip bomb: 300 MiB of zeros in about 300 KB. Import stops at once.
func TestImport_GzipBomb(t *testing.T) {
	var buf bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	tw := tar.NewWriter(gz)
	for _, e := range goodStart() {
		require.NoError(t, tw.WriteHeader(&e.hdr))
		_, _ = io.WriteString(tw, e.body)
	}
	const size = 300 << 20
	require.NoError(t, tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "assistant/zeros", Mode: 0o644, Size: size}))
	_, err := io.CopyN(tw, zeros{}, size)
	require.NoError(t, err)
	require.NoError(t, tw.Close())
	require.NoError(t, gz.Close())
	require.Less(t, buf.Len(), 1<<20)

	for name, lim := range map[string]Limits{
		"default limits":                {},
		"file limit above, total below": {MaxFileSize: 1 << 30, MaxTotalSize: 100 << 20},
	} {
		t.Run(name, func(t *testing.T) {
			r := &countingReader{r: bytes.NewReader(buf.Bytes())}
			err := importFrom(t, r, ImportOptions{Limits: lim})
			require.Error(t, err)
			assert.Contains(t, err.Error(), `"assistant/zeros"`)
			// At most 100 of the 300 MiB are unpacked: the import stops
			// reading about a third of the way in, however fast the machine.
			assert.Less(t, r.n, int64(buf.Len())/2, "the bomb is cut off, not unpacked")
		})
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

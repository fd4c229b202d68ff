package webui

import (
	"io/fs"
	"path"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAcceptsGzip(t *testing.T) {
	for v, want := range map[string]bool{
		"gzip": true, "GZIP": true, "x-gzip": true, "deflate, gzip;q=0.1": true, "*": true, " gzip ; q=1 ": true,
		"": false, "gzip;q=0": false, "gzip;q=0.000": false, "br": false, "*;q=0": false, "gzip;q=0, *": false,
		"gzip;q=2": false, "gzip;q=x": false, "identity": false,
		strings.Repeat("br,", maxHeaderItems) + "gzip": false, // past the items read
	} {
		assert.Equal(t, want, acceptsGzip([]string{v}), "%q", v)
	}
	assert.True(t, acceptsGzip([]string{"br", "gzip"}), "several header lines")
}

func TestEtagMatch(t *testing.T) {
	assert.True(t, etagMatch([]string{`"a"`}, `"a"`, `"a-gz"`))
	assert.True(t, etagMatch([]string{`"x", W/"a-gz"`}, `"a"`, `"a-gz"`))
	assert.True(t, etagMatch([]string{`*`}, `"a"`))
	assert.False(t, etagMatch([]string{`a`}, `"a"`), "unquoted is not the tag")
	assert.False(t, etagMatch(nil, `"a"`))
	assert.False(t, etagMatch([]string{strings.Repeat(`"x",`, maxHeaderItems) + `"a"`}, `"a"`))
}

// FuzzHeaders: the request headers Serve reads never panic it.
func FuzzHeaders(f *testing.F) {
	for _, s := range []string{"gzip", "gzip;q=0.5, br", "*;q=", ";;;,,,", `W/"a", *`, "q=1;gzip", "\x00\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		_ = acceptsGzip([]string{v, v})
		_ = etagMatch([]string{v}, `"a"`)
	})
}

// TestEmbedded_KnownTypes: every file the page ships has a media type, so
// no script is served as application/octet-stream (which browsers refuse
// to run as a module) and none is hidden.
func TestEmbedded_KnownTypes(t *testing.T) {
	require.NoError(t, fs.WalkDir(EmbeddedFS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		assert.Contains(t, contentTypes, path.Ext(p), "%s: add its media type to contentTypes", p)
		assert.True(t, validName(p), "%s is not served: no segment may start with a dot", p)
		return nil
	}))
}

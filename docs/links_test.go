package docs

import (
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every relative link of the manual names a file that exists, and every
// #anchor, in the same page or another Markdown file, a heading there.
// A link that leaves the repository (a scheme, //host) is not checked:
// the tests do not go on the network.
func TestLinks_Resolve(t *testing.T) {
	files := markdownFiles(t)
	cache := map[string]map[string]bool{}
	anchorsOf := func(rel string) map[string]bool {
		if a, ok := cache[rel]; ok {
			return a
		}
		a := anchors(readFile(t, rel))
		cache[rel] = a
		return a
	}
	checked := 0
	for _, f := range files {
		for _, l := range links(readFile(t, f)) {
			where := f + ":" + strconv.Itoa(l.line)
			target, frag, _ := strings.Cut(l.target, "#")
			if isExternal(target) {
				continue
			}
			checked++
			dest := f
			if target != "" {
				p, err := url.PathUnescape(target)
				require.NoError(t, err, "%s: %q is not a valid link", where, l.target)
				if strings.HasPrefix(p, "/") {
					assert.Fail(t, "absolute link", "%s: %q: link relative to the page, so it works in a clone and on GitHub", where, l.target)
					continue
				}
				dest = path.Clean(path.Join(path.Dir(f), p))
				if strings.HasPrefix(dest, "../") {
					assert.Fail(t, "link out of the repository", "%s: %q leaves the repository", where, l.target)
					continue
				}
				st, err := os.Stat(filepath.Join(root, filepath.FromSlash(dest)))
				if !assert.NoError(t, err, "%s: %q: %s does not exist", where, l.target, dest) {
					continue
				}
				if st.IsDir() || frag == "" {
					continue
				}
			}
			if frag == "" || !strings.HasSuffix(dest, ".md") {
				continue
			}
			assert.True(t, anchorsOf(dest)[frag], "%s: %q: %s has no heading whose anchor is #%s", where, l.target, dest, frag)
		}
	}
	assert.Greater(t, checked, 100, "the manual's pages link to each other: so few links means the scan is broken")
}

func isExternal(target string) bool {
	if strings.HasPrefix(target, "//") {
		return true
	}
	u, err := url.Parse(target)
	return err == nil && u.Scheme != ""
}

// The anchors are GitHub's, or links that work here break there.
func TestSlug(t *testing.T) {
	for heading, want := range map[string]string{
		"Two commands":                                         "two-commands",
		"Quick start: Ollama (fully offline)":                  "quick-start-ollama-fully-offline",
		"Long conversations, retention and costs":              "long-conversations-retention-and-costs",
		"`agnx.yaml` and `duragent.yaml`":                      "agnxyaml-and-duragentyaml",
		"Editors (ACP)":                                        "editors-acp",
		"Web pages, other programs, the network: the HTTP API": "web-pages-other-programs-the-network-the-http-api",
		"[Agnx](https://example.org) compatibility":            "agnx-compatibility",
		"snake_case and CamelCase":                             "snake_case-and-camelcase",
		"2,000 → 20,000 messages":                              "2000--20000-messages",
		"Ünïcode héading":                                      "ünïcode-héading",
	} {
		assert.Equal(t, want, slug(heading), heading)
	}
}

func TestAnchors_DuplicatesAreNumbered(t *testing.T) {
	a := anchors("# Setup\n\n## Setup\n\n```\n# Setup\n```\n\n### Setup\n<a id=\"by-hand\"></a>\n")
	for _, want := range []string{"setup", "setup-1", "setup-2", "by-hand"} {
		assert.True(t, a[want], want)
	}
	assert.False(t, a["setup-3"], "a heading inside a code block is no heading")
}

func TestLinks_SkipCode(t *testing.T) {
	got := links("See [the guide](docs/a.md#x) and `[not](a link)`.\n\n```\n[nor](this)\n```\n[ref]: docs/b.md\n" +
		"Wrapped [over\ntwo lines](c.md), and ``[a `tick`](d.md)``.\n")
	assert.Equal(t, []link{{1, "docs/a.md#x"}, {6, "docs/b.md"}, {7, "c.md"}}, got)
}

package main

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var mods = []string{"github.com/agnx-lite/agnx-lite", "github.com/tetratelabs/wazero", "gopkg.in/yaml.v3", "github.com/shirou/gopsutil/v4"}

func TestPartOf(t *testing.T) {
	for sym, want := range map[string]string{
		"github.com/tetratelabs/wazero/internal/engine/interpreter.(*callEngine).callNativeFunc": "github.com/tetratelabs/wazero",
		"github.com/agnx-lite/agnx-lite/runtime.(*state).apply":                                  "github.com/agnx-lite/agnx-lite",
		"main.commands":                                               "github.com/agnx-lite/agnx-lite",
		"gopkg.in/yaml.v3.(*parser).parse":                            "gopkg.in/yaml.v3",
		"github.com/shirou/gopsutil/v4/mem.init.0":                    "github.com/shirou/gopsutil/v4",
		"type:.eq.github.com/tetratelabs/wazero/internal/wasm.Module": "github.com/tetratelabs/wazero",
		"go:itab.*os.File,io.Reader":                                  "std:os",
		"net/http.(*Transport).roundTrip":                             "std:net+http",
		"vendor/golang.org/x/net/idna.idnaValues":                     "std:net+http",
		"crypto/internal/fips140/nistec.p256PrecomputedEmbed":         "std:crypto+tls+x509",
		"runtime.mallocgc":                                            "std:runtime+reflect",
		"slices.SortFunc[go.shape.struct { github.com/agnx-lite/agnx-lite/runtime.ID string }]": "std:slices",
		"encoding/gob.(*Decoder).Decode": "std:encoding/gob",
		"go:func.*":                      "std:linker",
		// A module path that is a prefix of another's must not claim it.
		"github.com/tetratelabs/wazerox.F": "std:github.com/tetratelabs/wazerox",
	} {
		assert.Equal(t, want, partOf(sym, mods), sym)
	}
}

func TestPkgOf(t *testing.T) {
	assert.Equal(t, "github.com/a/b", pkgOf("github.com/a/b.(*T).M"))
	assert.Equal(t, "github.com/a/b", pkgOf("github.com/a/b.F[github.com/x/y.T]"))
	assert.Equal(t, "fmt", pkgOf("fmt.Sprintf"))
	assert.Equal(t, "github.com/goccy/go-yaml/ast", pkgOf("go:itab.*github.com/goccy/go-yaml/ast.StringNode,github.com/goccy/go-yaml/ast.Node"))
	assert.Equal(t, "", pkgOf(""))
}

// The tool on a real unstripped build of itself: the standard library's
// groups appear and the parts add up to the code section.
func TestRunOnARealBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	bin := filepath.Join(t.TempDir(), "sizes")
	out, err := exec.Command("go", "build", "-trimpath", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, string(out))
	var b strings.Builder
	require.NoError(t, run(&b, bin, "", 100))
	assert.Contains(t, b.String(), "sections: .text")
	assert.Contains(t, b.String(), "std:runtime+reflect")
	assert.Contains(t, b.String(), "github.com/agnx-lite/agnx-lite")

	stripped := filepath.Join(t.TempDir(), "stripped")
	out, err = exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", stripped, ".").CombinedOutput()
	require.NoError(t, err, string(out))
	err = run(&b, stripped, "", 10)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "build it without -ldflags '-s -w'")

	require.Error(t, run(&b, filepath.Join(t.TempDir(), "missing"), "", 10))
}

func FuzzPartOf(f *testing.F) {
	for _, s := range []string{"main.main", "type:*[]uint8", "go:itab.*a,b", "a/b.(*T).M[x/y.Z]", "[", "/.", "type:.eq."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sym string) {
		p := partOf(sym, mods)
		assert.True(t, strings.HasPrefix(p, "std:") || slices.Contains(mods, p), p)
		assert.Equal(t, "github.com/tetratelabs/wazero", partOf("github.com/tetratelabs/wazero."+sym, mods))
	})
}

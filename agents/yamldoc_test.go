package agents

import (
	"errors"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestError_Error(t *testing.T) {
	assert.Equal(t, "a.yaml:3: bad", (&Error{File: "a.yaml", Line: 3, Msg: "bad"}).Error())
	assert.Equal(t, "a.yaml: bad", (&Error{File: "a.yaml", Msg: "bad"}).Error())
	assert.Equal(t, "bad", (&Error{Msg: "bad"}).Error())
}

func TestYAMLError(t *testing.T) {
	var v struct {
		A int `yaml:"a"`
	}
	err := yaml.UnmarshalWithOptions([]byte("a: 1\nb: 2\n"), &v, yaml.DisallowUnknownField())
	require.Error(t, err)
	require.Contains(t, err.Error(), "\n", "goccy's own text is multi-line")
	assert.Equal(t, `x.yaml:2: unknown field "b"`, YAMLError("x.yaml", err).Error())

	own := &Error{File: "f", Line: 1, Msg: "m"}
	assert.Same(t, own, YAMLError("other", own))
	assert.Equal(t, "x.yaml: boom", YAMLError("x.yaml", errors.New("boom\nmore")).Error())
	assert.NoError(t, YAMLError("x.yaml", nil))
}

func TestDoc_Line(t *testing.T) {
	src := "a: 1\nb:\n  c:\n    - x\n    - d: 2\n      e: 3\n  f: {g: 4}\n"
	doc, err := ParseYAML("f.yaml", []byte(src))
	require.NoError(t, err)
	for path, line := range map[string]int{
		"": 1, "a": 1, "b": 2, "b.c": 3, "b.c[0]": 4, "b.c[1].e": 6, "b.f.g": 7,
		"b.c[9]": 3, "b.missing": 2, "nope": 1, "b.c[1].e.deeper": 6,
	} {
		assert.Equal(t, line, doc.Line(path), path)
	}
	var empty *Doc
	assert.Equal(t, 0, empty.Line("a"))
	assert.Equal(t, "f.yaml:6: e is odd", doc.Errorf("b.c[1].e", "e is odd").Error())
}

func TestDoc_RewriteScalars(t *testing.T) {
	src := "n: $N\ns: '$N'\nb: $B\ne: $E\nl: |\n  $N\nk$N: v\nlist: [$N]\nt: !!str $N\n"
	doc, err := ParseYAML("f.yaml", []byte(src))
	require.NoError(t, err)
	var lines []int
	err = doc.RewriteScalars(func(v string, line int) (string, error) {
		lines = append(lines, line)
		v = strings.ReplaceAll(v, "$N", "42")
		v = strings.ReplaceAll(v, "$B", "true")
		return strings.ReplaceAll(v, "$E", ""), nil
	})
	require.NoError(t, err)
	var got struct {
		N    int    `yaml:"n"`
		S    string `yaml:"s"`
		B    bool   `yaml:"b"`
		E    *int   `yaml:"e"`
		L    string `yaml:"l"`
		K    string `yaml:"k$N"`
		List []int  `yaml:"list"`
		T    string `yaml:"t"`
	}
	require.NoError(t, doc.Decode(&got))
	assert.Equal(t, 42, got.N)
	assert.Equal(t, "42", got.S, "quoted stays a string")
	assert.True(t, got.B)
	assert.Nil(t, got.E, "empty plain value is null")
	assert.Equal(t, "42\n", got.L)
	assert.Equal(t, "v", got.K, "keys are not rewritten")
	assert.Equal(t, []int{42}, got.List)
	assert.Equal(t, "42", got.T)
	assert.Equal(t, 1, lines[0])
	assert.Equal(t, 9, doc.Line("t"))

	want := errors.New("stop")
	assert.Same(t, want, doc.RewriteScalars(func(string, int) (string, error) { return "", want }))
}

func TestEditDistance(t *testing.T) {
	assert.Equal(t, 1, editDistance("modle", "model"))
	assert.Equal(t, 0, editDistance("", ""))
	assert.Equal(t, 3, editDistance("abc", ""))
	assert.Equal(t, 1, editDistance("sesion", "session"))
}

package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestQuery(t *testing.T) {
	var doc any
	require.NoError(t, json.Unmarshal([]byte(`{"a":{"b":[{"c":"x"},2]},"n":[[1,2]]}`), &doc))
	for path, want := range map[string]any{"a.b[0].c": "x", "a.b[1]": 2.0, "n[0][1]": 2.0, ".a.b[0].c": "x"} {
		v, err := Query(doc, path)
		require.NoError(t, err, path)
		assert.Equal(t, want, v, path)
	}
	v, err := Query(doc, "")
	require.NoError(t, err)
	assert.Equal(t, doc, v)
	for path, want := range map[string]string{"a.x": `no key "x" at a`, "a.b[5]": "out of range", "a[0]": "a is not a list",
		"a.b[0].c.d": "a.b[0].c is not an object", "a.b[": "missing ]", "a.b[-1]": "not a list index"} {
		_, err := Query(doc, path)
		require.Error(t, err, path)
		assert.Contains(t, err.Error(), want, path)
	}
}

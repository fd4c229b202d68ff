package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// doctor --format json has the shape of Agnx's report, so what reads
// "duragent doctor --format json" reads ours: every field Agnx's serde
// structs require, with its values.
func TestCLI_DoctorJSONHasAgnxShape(t *testing.T) {
	c := newCLI(t)
	code, _, errs := c.run("init")
	require.Equal(t, 0, code, errs)
	_, out, _ := c.run("doctor", "--format", "json")
	var r struct {
		Status   *string `json:"status"`
		Sections []struct {
			Name   *string `json:"name"`
			Checks []struct {
				Status  *string `json:"status"`
				Message *string `json:"message"`
			} `json:"checks"`
		} `json:"sections"`
		Summary *struct{ OK, Warn, Error *int } `json:"summary"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &r), out)
	require.NotNil(t, r.Status)
	require.NotNil(t, r.Summary)
	require.NotNil(t, r.Summary.OK)
	require.NotNil(t, r.Summary.Warn)
	require.NotNil(t, r.Summary.Error)
	assert.Contains(t, []string{"ok", "warn", "error"}, *r.Status)
	var names []string
	count := 0
	for _, s := range r.Sections {
		require.NotNil(t, s.Name)
		names = append(names, *s.Name)
		for _, ch := range s.Checks {
			require.NotNil(t, ch.Status)
			require.NotNil(t, ch.Message)
			assert.Contains(t, []string{"ok", "warn", "error"}, *ch.Status)
			count++
		}
	}
	assert.Contains(t, names, "Configuration")
	assert.Contains(t, names, "Agents")
	assert.Equal(t, *r.Summary.OK+*r.Summary.Warn+*r.Summary.Error, count)
	want := map[bool]string{true: "error", false: "ok"}[*r.Summary.Error > 0]
	if *r.Summary.Error == 0 && *r.Summary.Warn > 0 {
		want = "warn"
	}
	assert.Equal(t, want, *r.Status)
}

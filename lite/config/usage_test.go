package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/runtime"
)

func TestParse_Prices(t *testing.T) {
	c, err := Parse("agnx.yaml", []byte("sessions:\n  daily_token_budget: 50000\nprices:\n"+
		"  claude-sonnet-4-5: {input: 3.0, output: 15.0, cache_read: 0.3, cache_write: 3.75}\n"+
		"  gpt-4.1-mini: {input: 0.4, output: 1.6}\n"))
	require.NoError(t, err)
	assert.Equal(t, map[string]runtime.Price{
		"claude-sonnet-4-5": {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75},
		"gpt-4.1-mini":      {Input: 0.4, Output: 1.6, CacheRead: 0.4, CacheWrite: 0.4},
	}, c.RuntimePrices())
	assert.Equal(t, 50000, c.UsageOptions().DailyTokenBudget)
	assert.Nil(t, Default().RuntimePrices())
}

func TestParse_PriceErrors(t *testing.T) {
	tests := []struct {
		name, yaml string
		line       int
		msg        string
	}{
		{"negative", "prices:\n  gpt-4o:\n    input: -1\n", 3, "prices.gpt-4o.input must be from 0 to 10000 US dollars per million tokens"},
		{"huge", "prices:\n  m:\n    input: 1\n    cache_write: 20000.5\n", 4, "prices.m.cache_write must be from 0 to 10000 US dollars per million tokens"},
		{"unknown key", "prices:\n  gpt-4o:\n    input: 1\n    cache_reads: 0.1\n", 4,
			`unknown field "cache_reads" in prices.gpt-4o (did you mean "cache_read"?)`},
		{"text", "prices:\n  gpt-4o:\n    input: cheap\n", 3, "prices.gpt-4o.input must be a number"},
		{"not a mapping", "prices: 3\n", 1, "prices must be a mapping"},
		{"budget", "sessions:\n  daily_token_budget: -5\n", 2, "sessions.daily_token_budget -5 must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("agnx.yaml", []byte(tt.yaml))
			require.Error(t, err)
			var e *agents.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, (&agents.Error{File: "agnx.yaml", Line: tt.line, Msg: tt.msg}).Error(), err.Error())
		})
	}
}

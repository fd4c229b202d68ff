package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCount(t *testing.T) {
	for in, want := range map[string]Counts{
		"":                   {},
		"one":                {Words: 1, Bytes: 3},
		"hello world\nbye\n": {Lines: 2, Words: 3, Bytes: 16},
		"  a\t b \n\n c":     {Lines: 2, Words: 3, Bytes: 11},
	} {
		c, err := Count(strings.NewReader(in))
		require.NoError(t, err)
		assert.Equal(t, want, c, "%q", in)
	}
}

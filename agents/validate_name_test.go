package agents

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// PlainName takes 1 to 64 of a-z, 0-9, _ and -, and upper case letters
// only when asked: a tool folder may be called Fetch_URL, a webhook not.
func TestPlainName(t *testing.T) {
	for _, name := range []string{"a", "github", "ci-build_2", strings.Repeat("x", 64)} {
		assert.True(t, PlainName(name, false), name)
		assert.True(t, PlainName(name, true), name)
	}
	assert.True(t, PlainName("Fetch_URL", true))
	assert.False(t, PlainName("Fetch_URL", false))
	for _, name := range []string{"", strings.Repeat("x", 65), "a.b", "a b", "a/b", "é", "a\n"} {
		assert.False(t, PlainName(name, true), name)
	}
}

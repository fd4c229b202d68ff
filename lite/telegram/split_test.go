package telegram

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSplit_Short(t *testing.T) {
	assert.Equal(t, []string{"hi"}, Split("  hi \n", 100))
	assert.Nil(t, Split(" \n ", 100))
}

func TestSplit_Paragraphs(t *testing.T) {
	p := strings.Repeat("word ", 15) // 75 bytes
	md := p + "\n\n" + p + "\n\n" + p
	parts := Split(md, 160)
	require.Len(t, parts, 2)
	assert.Equal(t, strings.TrimSpace(p+"\n\n"+p), parts[0])
	assert.Equal(t, strings.TrimSpace(p), parts[1])
}

func TestSplit_KeepsCodeBlockWhole(t *testing.T) {
	code := "```go\n" + strings.Repeat("x := 1\n", 10) + "```"
	md := strings.Repeat("a", 50) + "\n\n" + code + "\n\n" + strings.Repeat("b", 30)
	parts := Split(md, 100)
	require.Len(t, parts, 3)
	assert.Equal(t, code, parts[1], "the block is one piece, not cut inside")
}

func TestSplit_LongCodeBlockReopened(t *testing.T) {
	code := "```py\n" + strings.Repeat("print(1)\n", 30) + "```"
	parts := Split(code, 100)
	require.Greater(t, len(parts), 2)
	for _, p := range parts {
		assert.LessOrEqual(t, textLen(p), 100)
		assert.True(t, strings.HasPrefix(p, "```py\n"), p)
		assert.True(t, strings.HasSuffix(p, "\n```"), p)
	}
	var joined strings.Builder
	for _, p := range parts {
		joined.WriteString(strings.TrimSuffix(strings.TrimPrefix(p, "```py\n"), "```"))
	}
	assert.Equal(t, strings.Repeat("print(1)\n", 30), joined.String(), "no line lost or cut")
}

func TestSplit_LongLineAndWords(t *testing.T) {
	md := strings.Repeat("abcdefghij ", 50) + strings.Repeat("z", 250)
	parts := Split(md, 100)
	var n int
	for _, p := range parts {
		assert.LessOrEqual(t, textLen(p), 100)
		n += len(strings.ReplaceAll(p, " ", ""))
	}
	assert.Equal(t, 500+250, n)
}

func TestSplit_CountsUTF16(t *testing.T) {
	md := strings.Repeat("😀", 100) // 200 UTF-16 units
	parts := Split(md, 64)
	for _, p := range parts {
		assert.LessOrEqual(t, textLen(p), 64)
	}
	assert.Equal(t, md, strings.Join(parts, ""))
}

func TestSplit_Telegram4096(t *testing.T) {
	para := strings.Repeat("lorem ipsum ", 100) // 1200
	md := strings.Repeat(para+"\n\n", 10)
	parts := Split(md, MaxMessage)
	require.Len(t, parts, 4)
	for _, p := range parts {
		assert.LessOrEqual(t, textLen(p), MaxMessage)
		assert.True(t, strings.HasSuffix(p, "ipsum"), "cut between paragraphs")
	}
}

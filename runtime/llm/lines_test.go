package llm

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func readAll(t *testing.T, l *LineReader) ([]string, error) {
	t.Helper()
	var out []string
	for {
		line, err := l.ReadLine()
		if err != nil {
			return out, err
		}
		out = append(out, string(line))
	}
}

func TestLineReader_ReadLine(t *testing.T) {
	long := strings.Repeat("x", 100_000)
	in := "a\r\n\nb\n" + long + "\nlast"
	lines, err := readAll(t, NewLineReader(iotest.OneByteReader(strings.NewReader(in)), 0))
	assert.ErrorIs(t, err, io.EOF)
	assert.Equal(t, []string{"a", "", "b", long, "last"}, lines)
}

func TestLineReader_TooLong(t *testing.T) {
	l := NewLineReader(strings.NewReader(strings.Repeat("y", 40_000)+"\n"), 20_000)
	_, err := l.ReadLine()
	require.ErrorIs(t, err, ErrLineTooLong)
}

func TestLineReader_BrokenBody(t *testing.T) {
	l := NewLineReader(io.MultiReader(strings.NewReader("ok\npart"), iotest.ErrReader(io.ErrUnexpectedEOF)), 0)
	lines, err := readAll(t, l)
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
	assert.Equal(t, []string{"ok"}, lines)
}

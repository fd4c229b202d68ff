package golden

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestFirstDiffLine(t *testing.T) {
	assert.Equal(t, 2, firstDiffLine("a\nb\nc", "a\nx\nc"))
	assert.Equal(t, 3, firstDiffLine("a\nb", "a\nb\nc"), "a longer page differs after the shorter one ends")
	assert.Equal(t, 1, firstDiffLine("", "x"))
}

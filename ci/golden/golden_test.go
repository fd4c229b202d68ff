package golden

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFirstDiffLine(t *testing.T) {
	assert.Equal(t, 2, firstDiffLine("a\nb\nc", "a\nx\nc"))
	assert.Equal(t, 3, firstDiffLine("a\nb", "a\nb\nc"), "a longer page differs after the shorter one ends")
	assert.Equal(t, 1, firstDiffLine("", "x"))
}

// The module's root is found from any folder under it.
func TestModuleRoot(t *testing.T) {
	root := ModuleRoot(t)
	_, err := os.Stat(filepath.Join(root, "go.mod"))
	require.NoError(t, err)
	assert.Equal(t, root, filepath.Dir(filepath.Dir(mustGetwd(t))), "ci/golden is two below the root")
}

func mustGetwd(t *testing.T) string {
	dir, err := os.Getwd()
	require.NoError(t, err)
	return dir
}

package testenv

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The module's root is found from any folder under it.
func TestModuleRoot(t *testing.T) {
	root := ModuleRoot(t)
	_, err := os.Stat(filepath.Join(root, "go.mod"))
	require.NoError(t, err)
	wd, err := os.Getwd()
	require.NoError(t, err)
	assert.Equal(t, root, filepath.Dir(filepath.Dir(wd)), "ci/testenv is two below the root")
}

package lite

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The id is made once, kept 0600, and made again when what is there is
// not one (a truncated or edited file); a data dir it cannot write gives
// an error and no id, never a panic.
func TestInstanceID(t *testing.T) {
	dir := t.TempDir()
	id, err := instanceID(dir)
	require.NoError(t, err)
	assert.Regexp(t, `^[0-9a-f]{16}$`, id)
	again, err := instanceID(dir)
	require.NoError(t, err)
	assert.Equal(t, id, again)
	st, err := os.Stat(filepath.Join(dir, instanceIDFile))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())

	for _, junk := range []string{"", "xyz", "0123456789ABCDEF", "0123456789abcdef0", string(make([]byte, 1<<20))} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, instanceIDFile), []byte(junk), 0o600))
		id, err := instanceID(dir)
		require.NoError(t, err)
		assert.Regexp(t, `^[0-9a-f]{16}$`, id)
	}

	_, err = instanceID(filepath.Join(dir, "missing", "deeper"))
	assert.Error(t, err)
}

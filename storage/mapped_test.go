package storage

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fn runs with the file's path while a read transaction holds the mapping
// in place, and the transaction ends with fn.
func TestStore_Mapped(t *testing.T) {
	s := MustOpen(t)
	var inside int
	err := s.Mapped(func(path string) error {
		assert.Equal(t, s.path, path)
		inside = s.db.Stats().OpenTxN
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, 1, inside, "a read transaction is open while fn runs")
	assert.Zero(t, s.db.Stats().OpenTxN, "and closed after")

	boom := errors.New("boom")
	assert.ErrorIs(t, s.Mapped(func(string) error { return boom }), boom)
	assert.Zero(t, s.db.Stats().OpenTxN)

	require.NoError(t, s.Close())
	assert.Error(t, s.Mapped(func(string) error { return nil }), "a closed store maps nothing")
}

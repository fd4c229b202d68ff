package runtime

import (
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSessionULID_KnownValues(t *testing.T) {
	assert.Equal(t, "00000000000000000000000000", ulid([16]byte{}))
	var ones [16]byte
	for i := range ones {
		ones[i] = 0xff
	}
	assert.Equal(t, "7ZZZZZZZZZZZZZZZZZZZZZZZZZ", ulid(ones))
	assert.Equal(t, "00000000000000000000000001", ulid([16]byte{15: 1}))
	assert.Equal(t, "00000000000000000000000020", ulid([16]byte{15: 64}))
}

func TestNewSessionID_ShapeAndOrder(t *testing.T) {
	re := regexp.MustCompile(`^session_[0-9A-HJKMNP-TV-Z]{26}$`)
	t0 := time.UnixMilli(1_700_000_000_000)
	a, b := newSessionID(t0), newSessionID(t0.Add(time.Millisecond))
	require.Regexp(t, re, a)
	require.Regexp(t, re, b)
	assert.Less(t, a, b, "ids sort by creation time")
	// The time part is the first 10 digits: the same for the same ms.
	assert.Equal(t, a[:18], newSessionID(t0)[:18])
	assert.NotEqual(t, a, newSessionID(t0), "the random part differs")
}

package runtime

import (
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestMessageID(t *testing.T) {
	at := time.Date(2026, 11, 22, 20, 0, 0, 123e6, time.UTC)
	id := MessageID("s1", 7, at)
	assert.Regexp(t, regexp.MustCompile(`^msg_[0-7][0-9A-HJKMNP-TV-Z]{25}$`), id)
	assert.Equal(t, id, MessageID("s1", 7, at), "the same message has the same id")
	assert.NotEqual(t, id, MessageID("s1", 8, at))
	assert.NotEqual(t, id, MessageID("s2", 7, at))
	later := MessageID("s1", 1, at.Add(time.Millisecond))
	assert.Greater(t, later, id, "ids sort by time")
	// The time part is the ULID's first 10 digits: 48 bits of ms.
	assert.Equal(t, MessageID("x", 1, at)[:14], id[:14])
}

package llm

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestBackoff_Delay(t *testing.T) {
	b := backoff{base: 500 * time.Millisecond, cap: 30 * time.Second}
	for retry := range 40 {
		ceil := min(b.cap, b.base<<min(retry, 20))
		for range 50 {
			d := b.delay(retry)
			assert.GreaterOrEqual(t, d, time.Duration(0))
			assert.LessOrEqual(t, d, ceil)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"3", 3 * time.Second, true},
		{" 0 ", 0, true},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0, true},
		{"", 0, false},
		{"-1", 0, false},
		{"soon", 0, false},
		{"99999999999", 24 * time.Hour, true},
	}
	for _, tt := range tests {
		d, ok := ParseRetryAfter(tt.in, now)
		assert.Equal(t, tt.ok, ok, tt.in)
		assert.Equal(t, tt.want, d, tt.in)
	}
}

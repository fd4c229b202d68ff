package runtime

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseSince(t *testing.T) {
	loc := time.FixedZone("CET", 3600)
	now := time.Date(2026, 11, 23, 15, 30, 0, 0, loc)
	tests := []struct {
		in   string
		want time.Time
	}{
		{"", time.Time{}},
		{"7d", now.Add(-7 * 24 * time.Hour)},
		{" 24h ", now.Add(-24 * time.Hour)},
		{"90m", now.Add(-90 * time.Minute)},
		{"today", time.Date(2026, 11, 23, 0, 0, 0, 0, loc)},
		{"2026-11-01", time.Date(2026, 11, 1, 0, 0, 0, 0, loc)},
		{"2026-11-01T08:00:00Z", time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC)},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseSince(tt.in, now, loc)
			require.NoError(t, err)
			assert.True(t, tt.want.Equal(got), "got %v", got)
		})
	}
	for _, bad := range []string{"7", "-7d", "0d", "-1h", "99999999d", "yesterday", "2026-13-01", strings.Repeat("9", 100)} {
		t.Run("bad "+bad[:min(len(bad), 10)], func(t *testing.T) {
			_, err := ParseSince(bad, now, loc)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "use a span back from now such as 7d or 24h")
		})
	}
}

func FuzzParseSince(f *testing.F) {
	for _, s := range []string{"", "7d", "24h", "today", "2026-11-01", "2026-11-01T08:00:00+01:00", "1e9h", "-0d", "+5d"} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 23, 15, 30, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseSince(s, now, time.UTC)
		if err != nil {
			assert.True(t, got.IsZero())
			assert.Less(t, len(err.Error()), 300)
		}
	})
}

package hostfacts

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestThrottle_Bits(t *testing.T) {
	for word, want := range map[Throttle]struct{ now, since []string }{
		0x0:     {[]string{}, []string{}},
		0x50000: {[]string{}, []string{"under_voltage", "throttled"}},
		0x50005: {[]string{"under_voltage", "throttled"}, []string{"under_voltage", "throttled"}},
		0x80008: {[]string{"soft_temperature_limit"}, []string{"soft_temperature_limit"}},
		0xe0000: {[]string{}, []string{"frequency_capped", "throttled", "soft_temperature_limit"}},
		0xfff0:  {[]string{}, []string{}},
	} {
		assert.Equal(t, want.now, word.Now().Names(), "%#x now", uint32(word))
		assert.Equal(t, want.since, word.SinceBoot().Names(), "%#x since boot", uint32(word))
	}
}

func TestReader_Throttle(t *testing.T) {
	for name, tc := range map[string]struct {
		path, data string
		want       Throttle
		found      bool
	}{
		"pi 4":        {"devices/platform/soc/soc:firmware/get_throttled", "50005\n", 0x50005, true},
		"pi 5":        {"devices/platform/soc@107c000000/soc@107c000000:firmware/get_throttled", "0\n", 0, true},
		"0x":          {"devices/platform/soc/soc:firmware/get_throttled", "0x80008\n", 0x80008, true},
		"garbage":     {"devices/platform/soc/soc:firmware/get_throttled", "what\n", 0, false},
		"not a pi":    {"devices/platform/other/get_throttled", "1\n", 0, false},
		"over 32 bit": {"devices/platform/soc/soc:firmware/get_throttled", "100000000\n", 0, false},
	} {
		t.Run(name, func(t *testing.T) {
			sys := t.TempDir()
			writeFiles(t, sys, map[string]string{tc.path: tc.data})
			got, found := (&Reader{SysDir: sys}).Throttle()
			require.Equal(t, tc.found, found)
			assert.Equal(t, tc.want, got)
		})
	}
}

package doctor

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/runtime/hostfacts"
)

// Each host check against its threshold: ok below, warn at or over it.
func TestHostChecks_Thresholds(t *testing.T) {
	cfg := config.Default()
	const gb = 1 << 30
	good := hostfacts.Facts{
		Memory: hostfacts.Memory{Total: 4 * gb, Available: 2 * gb},
		Disk:   hostfacts.Disk{Dir: "/data", Total: 32 * gb, Free: 10 * gb},
		Load:   hostfacts.Load{Load1: 9, Load5: 8, Load15: 1},
	}
	for name, tc := range map[string]struct {
		change func(*hostfacts.Facts)
		check  func(hostfacts.Facts) Check
		status string
		detail string
	}{
		"memory ok":       {nil, func(f hostfacts.Facts) Check { return memoryCheck(cfg, f) }, "ok", "2048 MiB available of 4096 MiB"},
		"memory low":      {func(f *hostfacts.Facts) { f.Memory.Available = lowMemory - 1 }, func(f hostfacts.Facts) Check { return memoryCheck(cfg, f) }, "warn", "64 MiB available"},
		"memory unknown":  {func(f *hostfacts.Facts) { f.MemoryErr = errors.New("no /proc") }, func(f hostfacts.Facts) Check { return memoryCheck(cfg, f) }, "warn", "no /proc"},
		"disk ok":         {nil, diskCheck, "ok", "10.0 GiB free of 32.0 GiB where the data lives (/data)"},
		"disk under 500":  {func(f *hostfacts.Facts) { f.Disk.Free = lowDisk - 1 }, diskCheck, "warn", "500 MiB free of 32.0 GiB"},
		"disk under 5%":   {func(f *hostfacts.Facts) { f.Disk.Total, f.Disk.Free = 1000*gb, 49*gb }, diskCheck, "warn", "under 500 MiB or 5%"},
		"disk at 5%":      {func(f *hostfacts.Facts) { f.Disk.Total, f.Disk.Free = 1000*gb, 50*gb }, diskCheck, "ok", "50.0 GiB free"},
		"disk unknown":    {func(f *hostfacts.Facts) { f.DiskErr = errors.New("gone") }, diskCheck, "warn", "gone"},
		"load ok":         {nil, func(f hostfacts.Facts) Check { return loadCheck(f, 4) }, "ok", "9.00 8.00 1.00 (1, 5, 15 min) on 4 cores"},
		"load busy":       {nil, func(f hostfacts.Facts) Check { return loadCheck(f, 3) }, "warn", "work waits for the CPU"},
		"no sensor":       {nil, temperatureCheck, "ok", noSensor},
		"warm":            {func(f *hostfacts.Facts) { f.CPUTemp, f.HasTemp = 79.9, true }, temperatureCheck, "ok", "79.9 °C"},
		"hot":             {func(f *hostfacts.Facts) { f.CPUTemp, f.HasTemp = 80, true }, temperatureCheck, "warn", "80.0 °C: the CPU throttles"},
		"not a pi":        {nil, throttleCheck, "ok", noThrottle},
		"never throttled": {func(f *hostfacts.Facts) { f.HasThrottle = true }, throttleCheck, "ok", "now: none; since boot: none (firmware word 0x0)"},
		"was hot":         {func(f *hostfacts.Facts) { f.Throttle, f.HasThrottle = 0xe0000, true }, throttleCheck, "ok", "since boot: frequency capped, throttled, soft temperature limit"},
		"hot now":         {func(f *hostfacts.Facts) { f.Throttle, f.HasThrottle = 0x80008, true }, throttleCheck, "warn", "now: soft temperature limit"},
		"power was short": {func(f *hostfacts.Facts) { f.Throttle, f.HasThrottle = 0x50000, true }, throttleCheck, "warn", "now: none; since boot: under voltage, throttled"},
		"power short now": {func(f *hostfacts.Facts) { f.Throttle, f.HasThrottle = 0x50005, true }, throttleCheck, "warn", "now: under voltage, throttled"},
	} {
		t.Run(name, func(t *testing.T) {
			f := good
			if tc.change != nil {
				tc.change(&f)
			}
			c := tc.check(f)
			assert.Equal(t, tc.status, c.Status, c.Detail)
			assert.Contains(t, c.Detail, tc.detail)
			if c.Status != "ok" && tc.detail != "no /proc" && tc.detail != "gone" {
				assert.NotEmpty(t, c.Fix, "a warning says what to do")
			}
		})
	}
	assert.Contains(t, throttleCheck(hostfacts.Facts{Throttle: 0x50000, HasThrottle: true}).Fix, "power supply")
	assert.Contains(t, throttleCheck(hostfacts.Facts{Throttle: 0x80008, HasThrottle: true}).Fix, "heatsink")
}

// doctor names every host fact; the health report leaves out the sensors
// the machine does not have.
func TestFactChecks(t *testing.T) {
	cfg := config.Default()
	names := func(cs []Check) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.Name)
		}
		return out
	}
	bare := hostfacts.Facts{}
	assert.Equal(t, []string{"memory", "disk", "load", "temperature", "throttling"}, names(factChecks(cfg, bare, true)))
	assert.Equal(t, []string{"memory", "disk", "load"}, names(factChecks(cfg, bare, false)))
	// A Raspberry Pi's reading: warm, short of power now.
	pi := hostfacts.Facts{CPUTemp: 61.835, HasTemp: true, Throttle: 0x50005, HasThrottle: true}
	checks := factChecks(cfg, pi, false)
	require.Equal(t, []string{"memory", "disk", "load", "temperature", "throttling"}, names(checks))
	assert.Equal(t, "ok", checks[3].Status)
	assert.Equal(t, "61.8 °C", checks[3].Detail)
	assert.Equal(t, "warn", checks[4].Status)
}

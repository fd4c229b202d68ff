package hostfacts

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A Raspberry Pi's /sys and /proc, as far as the facts go: no hwmon, one
// thermal zone, the firmware's throttling word.
func fakePi(t *testing.T, throttled string) *Reader {
	proc, sys := t.TempDir(), t.TempDir()
	writeFiles(t, proc, map[string]string{
		"meminfo": meminfoSample,
		"loadavg": "0.52 0.40 3.25 1/123 4567\n",
	})
	writeFiles(t, sys, map[string]string{
		"class/thermal/thermal_zone0/type":                "cpu-thermal\n",
		"class/thermal/thermal_zone0/temp":                "61835\n",
		"devices/platform/soc/soc:firmware/get_throttled": throttled,
	})
	return &Reader{ProcDir: proc, SysDir: sys}
}

func TestReader_Read(t *testing.T) {
	r := fakePi(t, "50005\n")
	dir := t.TempDir()
	f := r.Read(t.Context(), dir)

	require.NoError(t, f.MemoryErr)
	assert.Equal(t, Memory{Total: 933448 << 10, Available: 611204 << 10}, f.Memory)
	require.NoError(t, f.LoadErr)
	assert.Equal(t, Load{Load1: 0.52, Load5: 0.40, Load15: 3.25}, f.Load)
	require.NoError(t, f.DiskErr)
	assert.Equal(t, dir, f.Disk.Dir)
	assert.Positive(t, f.Disk.Total)
	assert.LessOrEqual(t, f.Disk.Free, f.Disk.Total)
	require.True(t, f.HasTemp)
	assert.InDelta(t, 61.835, f.CPUTemp, 1e-9)
	require.True(t, f.HasThrottle)
	assert.Equal(t, UnderVoltage|Throttled, f.Throttle.Now())
	assert.Equal(t, UnderVoltage|Throttled, f.Throttle.SinceBoot())
}

// A machine with none of the sensors: no temperature, no throttling, and
// errors, not zeros, for what cannot be read.
func TestReader_ReadBareMachine(t *testing.T) {
	r := &Reader{ProcDir: t.TempDir(), SysDir: t.TempDir()}
	f := r.Read(t.Context(), t.TempDir())
	require.Error(t, f.MemoryErr)
	assert.Contains(t, f.MemoryErr.Error(), "cannot read the machine's memory")
	assert.False(t, f.HasTemp)
	assert.False(t, f.HasThrottle)
	require.NoError(t, f.DiskErr, "statfs needs no /proc")
}

// hwmon, where there is one, wins over the thermal zones, and the
// hottest sensor is the one reported.
func TestReader_TemperatureHottestHwmon(t *testing.T) {
	sys := t.TempDir()
	writeFiles(t, sys, map[string]string{
		"class/hwmon/hwmon0/name":          "nvme\n",
		"class/hwmon/hwmon0/temp1_input":   "38850\n",
		"class/hwmon/hwmon1/name":          "k10temp\n",
		"class/hwmon/hwmon1/temp1_input":   "71250\n",
		"class/hwmon/hwmon1/temp2_input":   "not a number\n",
		"class/thermal/thermal_zone0/type": "acpitz\n",
		"class/thermal/thermal_zone0/temp": "99000\n",
	})
	temp, ok := (&Reader{SysDir: sys}).Temperature(t.Context())
	require.True(t, ok)
	assert.InDelta(t, 71.25, temp, 1e-9)
}

// The data dir not made yet is measured where it will be.
func TestReader_DiskOfADirToBe(t *testing.T) {
	dir := t.TempDir()
	var r Reader
	d, err := r.Disk(t.Context(), filepath.Join(dir, "not", "yet"))
	require.NoError(t, err)
	assert.Equal(t, dir, d.Dir)
	assert.Positive(t, d.Total)

	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	_, err = r.Disk(t.Context(), filepath.Join(file, "below"))
	require.Error(t, err, "a path through a file is not a dir to be")
}

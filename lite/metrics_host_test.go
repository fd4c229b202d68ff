package lite

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/runtime/hostfacts"
)

// /metrics gives the host facts as agnx_host_* gauges, read from the
// machine's /proc and /sys (here fake ones), and this process's memory
// from the same reader.
func TestMetrics_Host(t *testing.T) {
	cfg := crashConfig(t.TempDir())
	_, err := config.Init(cfg)
	require.NoError(t, err)
	cfg.Runtime.MemoryLimitMB = 0
	app, err := Open(cfg, &Options{NoSync: true, host: fakeHost(t, "50005\n")})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, app.Close()) })

	var b bytes.Buffer
	app.WriteMetrics(&b)
	out := b.String()
	page := os.Getpagesize()
	for _, want := range []string{
		"agnx_host_memory_total_bytes 9.55850752e+08",
		"agnx_host_memory_available_bytes 6.25872896e+08",
		`agnx_host_load_average{minutes="1"} 0.52`,
		`agnx_host_load_average{minutes="5"} 0.4`,
		`agnx_host_load_average{minutes="15"} 3.25`,
		"agnx_host_cpu_temperature_celsius 61.835",
		`agnx_host_throttled{condition="under_voltage"} 1`,
		`agnx_host_throttled{condition="frequency_capped"} 0`,
		`agnx_host_throttled{condition="throttled"} 1`,
		`agnx_host_throttled{condition="soft_temperature_limit"} 0`,
		`agnx_host_throttled_since_boot{condition="under_voltage"} 1`,
		`agnx_host_throttled_since_boot{condition="soft_temperature_limit"} 0`,
		"# TYPE agnx_host_throttled gauge",
	} {
		assert.Contains(t, out, want+"\n")
	}
	assert.Contains(t, out, "agnx_resident_memory_bytes "+promFloat(5000*page)+"\n")
	assert.Contains(t, out, "agnx_anonymous_memory_bytes "+promFloat(2000*page)+"\n")
	assert.Regexp(t, `agnx_host_disk_total_bytes [1-9]`, out)
	assert.Regexp(t, `agnx_host_disk_free_bytes [0-9]`, out)
}

// On a machine without the sensors there is no temperature or
// throttling gauge, rather than a zero that would read as a fact.
func TestMetrics_HostWithoutSensors(t *testing.T) {
	var b bytes.Buffer
	bare := &hostfacts.Reader{ProcDir: t.TempDir(), SysDir: t.TempDir()}
	writeHost(&promWriter{&b}, bare.Read(t.Context(), t.TempDir()))
	out := b.String()
	assert.NotContains(t, out, "agnx_host_cpu_temperature_celsius")
	assert.NotContains(t, out, "agnx_host_throttled")
	assert.NotContains(t, out, "agnx_host_memory", "unreadable: left out")
	assert.Contains(t, out, "agnx_host_disk_free_bytes ")
}

// fakeHost is a Raspberry Pi's /proc and /sys as far as the host facts
// go (this process's statm included, for the memory gauges), with the
// firmware's throttling word throttled.
func fakeHost(t *testing.T, throttled string) *hostfacts.Reader {
	t.Helper()
	proc, sys := t.TempDir(), t.TempDir()
	for root, files := range map[string]map[string]string{
		proc: {
			"meminfo":                            "MemTotal:         933448 kB\nMemFree:          112340 kB\nMemAvailable:     611204 kB\n",
			"loadavg":                            "0.52 0.40 3.25 1/123 4567\n",
			fmt.Sprintf("%d/statm", os.Getpid()): "300000 5000 3000 5 0 123 0\n",
		},
		sys: {
			"class/thermal/thermal_zone0/type":                "cpu-thermal\n",
			"class/thermal/thermal_zone0/temp":                "61835\n",
			"devices/platform/soc/soc:firmware/get_throttled": throttled,
		},
	} {
		for name, content := range files {
			p := filepath.Join(root, name)
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		}
	}
	return &hostfacts.Reader{ProcDir: proc, SysDir: sys}
}

// promFloat is a byte count as /metrics prints it.
func promFloat(n int) string { return strconv.FormatFloat(float64(n), 'g', -1, 64) }

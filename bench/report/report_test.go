package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime/hostfacts"
)

func TestReadMetrics(t *testing.T) {
	text := `# HELP agnx_go_heap_bytes Go heap in use.
# TYPE agnx_go_heap_bytes gauge
agnx_go_heap_bytes 3.2768e+06
agnx_go_heap_bytes_extra 7
# HELP agnx_go_alloc_bytes_total Bytes allocated.
# TYPE agnx_go_alloc_bytes_total counter
agnx_go_alloc_bytes_total 123456789
`
	heap, alloc, err := readMetrics(strings.NewReader(text))
	require.NoError(t, err)
	assert.Equal(t, int64(3276800), heap)
	assert.Equal(t, int64(123456789), alloc)

	heap, alloc, err = readMetrics(strings.NewReader("agnx_go_heap_bytes 10\n"))
	require.NoError(t, err)
	assert.Equal(t, int64(10), heap)
	assert.Equal(t, int64(-1), alloc, "a build without the counter says so")
}

func TestPerTurn(t *testing.T) {
	a := sample{messages: 2000, alloc: 1_000_000}
	b := sample{messages: 20000, alloc: 1_000_000 + 18000*50_000}
	assert.Equal(t, "50 KB (2,000 → 20,000 messages)", perTurn(a, b))
	assert.Contains(t, perTurn(a, sample{messages: 4000, alloc: -1}), "n/a")
	assert.Equal(t, "20,000", thousands(20000))
	assert.Equal(t, "200", thousands(200))
}

// The floor answers /readyz when started with agnx-lite's arguments and
// exits cleanly on SIGTERM (stop reports a kill after 10 s as an error).
func TestFloorServes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds bench/floor")
	}
	bin := filepath.Join(t.TempDir(), "floor")
	t.Chdir("../..") // go build ./bench/floor from the module root, as make bench does
	require.NoError(t, buildFloor("go", bin, nil))
	s, err := startServe(daemonCmd{bin: bin}, []string{"PATH=" + os.Getenv("PATH")})
	require.NoError(t, err)
	resp, err := httpc.Get(s.base + "/readyz")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode)
	require.NoError(t, s.stop())
	assert.True(t, s.cmd.ProcessState.Success(), "SIGTERM ends the floor with status 0")
}

// The long run's growth is measured to its last message, and the settled
// sample taken after it is shown beside it and in the long-run table.
func TestTargets_LongRunSettled(t *testing.T) {
	mem := func(rss, anon int64) sample {
		return sample{mem: hostfacts.Mem{RSS: rss << 20, Anon: anon << 20}, heap: -1, alloc: -1}
	}
	s0, s2, s4, st := mem(20, 5), mem(22, 8), mem(30, 10), mem(12, 8)
	s2.messages, s4.messages, st.messages, st.settled = 2000, 4000, 4000, true
	var tb table
	tb.targets(&figures{long: []sample{s0, s2, s4, st}, oneAlloc: 40_000})
	md := tb.markdown()
	assert.Contains(t, md, "2,000 → 4,000: +8.0 MiB RSS (+2.0 anonymous)")
	assert.Contains(t, md, "settled 12.0 MiB (8.0 anonymous)")
	assert.Contains(t, md, "| 4,000, settled | 12.0 MiB | 8.0 MiB |")
	assert.Contains(t, md, "40 KB (200 messages, one session)")
}

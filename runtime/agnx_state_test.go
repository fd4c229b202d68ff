package runtime

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// A state.json from outside never panics the reader, and what it accepts
// brings back a session that starts with session_start and replays.
func FuzzParseAgnxState(f *testing.F) {
	data, err := os.ReadFile("testdata/agnx/compacted/state.json")
	require.NoError(f, err)
	f.Add(data)
	f.Add([]byte(`{"schema_version":"2","agent":"a","status":"completed","conversation":[{"role":"tool"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := parseAgnxState(data)
		if err != nil {
			return
		}
		evs := AgnxTurns(st.events())
		require.Equal(t, EvSessionStart, evs[0].Type)
		require.NoError(t, checkImport(evs))
		var s state
		for i := range evs {
			evs[i].Seq = uint64(i + 1)
			s.apply(&evs[i])
		}
	})
}

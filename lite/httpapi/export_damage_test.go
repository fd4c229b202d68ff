package httpapi_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/httpapi"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// An export whose archive is damaged sends every readable event and
// says, in its trailer, what is missing: the client's Export returns that
// sentence instead of a silently short log.
func TestExport_DamagedArchiveIsReported(t *testing.T) {
	e := newAPIEnv(t, llmtest.Echo())
	sid := e.session()
	long := strings.Repeat("words ", 150)
	for _, m := range []string{"one", "two", "three"} {
		e.call("POST", "/api/v1/sessions/"+sid+"/messages", `{"content":"`+m+" "+long+`"}`, 200, nil)
	}
	var compacted struct{ Method string }
	e.call("POST", "/api/v1/sessions/"+sid+"/compact", "", 200, &compacted)
	require.Equal(t, "summary", compacted.Method)
	// The next turn's end checkpoints where the window now starts.
	e.call("POST", "/api/v1/sessions/"+sid+"/messages", `{"content":"four"}`, 200, nil)
	c := httpapi.NewClient(e.srv.URL, httpapi.ClientOptions{})
	var whole []uint64
	require.NoError(t, c.Export(context.Background(), sid, func(ev runtime.Event) error { whole = append(whole, ev.Seq); return nil }))

	res, err := runtime.Retain(e.st, sid, runtime.RetainOptions{Mode: runtime.CompactionArchive})
	require.NoError(t, err)
	require.Positive(t, res.Archived, "the summarised part left the database for the archive")
	var again []uint64
	require.NoError(t, c.Export(context.Background(), sid, func(ev runtime.Event) error { again = append(again, ev.Seq); return nil }))
	assert.Equal(t, whole, again, "an archived session exports whole")

	path := filepath.Join(runtime.ArchiveDir(e.st), sid+".jsonl.gz")
	arch, err := os.ReadFile(path)
	require.NoError(t, err)
	arch[len(arch)-6] ^= 0xff // the last member's CRC
	require.NoError(t, os.WriteFile(path, arch, 0o600))
	var got []uint64
	err = c.Export(context.Background(), sid, func(ev runtime.Event) error { got = append(got, ev.Seq); return nil })
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is incomplete")
	assert.Contains(t, err.Error(), "damaged")
	assert.NotEmpty(t, got, "what was readable came")
	assert.Equal(t, whole[len(whole)-1], got[len(got)-1], "the stored events came after the damage")
}

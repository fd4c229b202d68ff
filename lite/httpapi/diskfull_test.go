package httpapi_test

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
	"github.com/agnx-lite/agnx-lite/storage/storagetest"
)

// newFullDiskEnv is the API with its data dir on a 1 MiB tmpfs and no
// disk reserve, whose model, asked "hello", waits on release, then answers
// at length (more than is left once the test filled the disk).
func newFullDiskEnv(t *testing.T) (e *apiEnv, disk string, asked, release chan struct{}) {
	t.Helper()
	disk = storagetest.TinyDisk(t, "1m")
	asked, release = make(chan struct{}, 1), make(chan struct{})
	echo := llmtest.Echo()
	fake := llmtest.NewHandler(t, llmtest.Ollama, func(r llmtest.RecordedRequest) llmtest.Reply {
		if r.LastUser() == "hello" {
			select {
			case asked <- struct{}{}:
			default:
			}
			<-release
			return llmtest.Reply{Text: strings.Repeat("long answer ", 10_000), Chunks: 1}
		}
		return echo(r)
	})
	t.Setenv("OLLAMA_HOST", fake.BaseURL())
	cfg := config.Default()
	cfg.DataDir = disk
	cfg.AgentsDir = filepath.Join(disk, "agents")
	cfg.Runtime.MemoryLimitMB = 0
	cfg.Runtime.DBReserveMB = 0 // the reserve would let the turn end
	_, err := agents.WriteTemplate(cfg.AgentsDir, "assistant")
	require.NoError(t, err)
	app, err := lite.Open(cfg, &lite.Options{NoSync: true})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, app.Close()) })
	<-app.Loop.Ready()
	e = &apiEnv{t: t, fake: fake, cfg: cfg, loop: app.Loop, st: app.Store}
	e.serve(dirAgents{cfg.AgentsDir, app.Agents})
	return e, disk, asked, release
}

// userMessages lists the session's stored user messages, cut to 40
// characters.
func (e *apiEnv) storedUserMessages(sid string) []string {
	e.t.Helper()
	var out []string
	require.NoError(e.t, runtime.ReadEvents(e.st, sid, 0, func(ev runtime.Event) error {
		if ev.Type == runtime.EvUserMessage {
			out = append(out, ev.Content[:min(len(ev.Content), 40)])
		}
		return nil
	}))
	return out
}

// A message whose turn fails because the disk fills up is stored all the
// same: POST .../messages says so (500, the seq, "must not be sent
// again"), not 507, which told clients nothing was stored; and a client
// that sends it again anyway stores nothing and gets the same answer. A
// message the full disk refuses to store at all is 507: nothing stored,
// send it again.
func TestMessages_DiskFullAnswersTruthfully(t *testing.T) {
	e, disk, asked, release := newFullDiskEnv(t)
	sid := e.session()
	path := "/api/v1/sessions/" + sid + "/messages"
	answer := make(chan *http.Response, 1)
	go func() { answer <- e.do("POST", path, `{"content":"hello"}`) }()
	<-asked
	storagetest.Fill(t, filepath.Join(disk, "workspace-file"))
	close(release)
	p := requireProblem(t, <-answer, http.StatusInternalServerError, "insufficient_storage")
	assert.Regexp(t, `^the disk filled up during this message's turn, which could not finish; the message is stored \(seq \d+\) and must not be sent again`, p.Detail)
	require.NoError(t, os.Remove(filepath.Join(disk, "workspace-file")))

	p = requireProblem(t, e.do("POST", path, `{"content":"hello"}`), http.StatusInternalServerError, "insufficient_storage")
	assert.Regexp(t, `^this message is stored already \(seq \d+\) and its turn failed when the disk filled up, so it was not stored again`, p.Detail)
	assert.Equal(t, []string{"hello"}, e.storedUserMessages(sid), "the resend stored nothing")

	var reply struct{ Content string }
	e.call("POST", path, `{"content":"next"}`, http.StatusOK, &reply)
	assert.Equal(t, "echo: next", reply.Content, "the next message is answered")

	storagetest.Fill(t, filepath.Join(disk, "workspace-file"))
	resp := e.do("POST", path, `{"content":"`+strings.Repeat("big ", 64<<10)+`"}`)
	p = requireProblem(t, resp, http.StatusInsufficientStorage, "insufficient_storage")
	assert.Equal(t, "the disk is full, so nothing of the request was stored: free some space, then send it again", p.Detail)
	require.NoError(t, os.Remove(filepath.Join(disk, "workspace-file")))
	assert.Equal(t, []string{"hello", "next"}, e.storedUserMessages(sid), "the refused message is not stored")
	_, _ = io.Copy(io.Discard, resp.Body)
}

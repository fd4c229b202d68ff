package agentcache

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/agnx-lite/agnx-lite/lite/toolset"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pullLines are what Ollama streams for a pull, as its server writes them
// (application/x-ndjson, one flush a line).
var pullLines = []string{
	`{"status":"pulling manifest"}`,
	`{"status":"pulling 3f2a5e1b0c44","digest":"sha256:3f2a5e1b0c44","total":1073741824}`,
	`{"status":"pulling 3f2a5e1b0c44","digest":"sha256:3f2a5e1b0c44","total":1073741824,"completed":536870912}`,
	`{"status":"pulling 3f2a5e1b0c44","digest":"sha256:3f2a5e1b0c44","total":1073741824,"completed":1073741824}`,
	`{"status":"pulling 62fbfd9ed093","digest":"sha256:62fbfd9ed093","total":182,"completed":182}`,
	`{"status":"verifying sha256 digest"}`,
	`{"status":"writing manifest"}`,
	`{"status":"success"}`,
}

// fakeOllamaPull is an Ollama that answers POST /api/pull with lines (or
// with status and a body, when status is not 200); it records the model
// asked for.
func fakeOllamaPull(t *testing.T, status int, lines ...string) (*httptest.Server, *string) {
	t.Helper()
	var asked string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/api/pull" {
			http.NotFound(w, r)
			return
		}
		var req struct {
			Model  string `json:"model"`
			Stream *bool  `json:"stream"`
		}
		if json.NewDecoder(r.Body).Decode(&req) != nil || req.Model == "" {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":"model is required"}`))
			return
		}
		asked = req.Model
		if status != http.StatusOK {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.WriteHeader(status)
			_, _ = w.Write([]byte(lines[0]))
			return
		}
		w.Header().Set("Content-Type", "application/x-ndjson")
		for _, l := range lines {
			if l == "STALL" {
				<-r.Context().Done()
				return
			}
			_, _ = w.Write([]byte(l + "\n"))
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &asked
}

func TestPullModel_ShowsStepsAndBytes(t *testing.T) {
	srv, asked := fakeOllamaPull(t, http.StatusOK, pullLines...)
	var tty bytes.Buffer
	p := toolset.NewProgress(&tty, true).Every(0) // every count drawn
	require.NoError(t, PullModel(context.Background(), srv.URL+"/v1", "qwen3:1.7b", p, nil))
	assert.Equal(t, "qwen3:1.7b", *asked)
	assert.Contains(t, tty.String(), "\r\x1b[Kpulling 3f2a5e1b0c44  50% (512.0 MiB of 1.0 GiB)")
	assert.Contains(t, tty.String(), "\r\x1b[Kwriting manifest")

	var pipe bytes.Buffer
	require.NoError(t, PullModel(context.Background(), srv.URL, "qwen3:1.7b", toolset.NewProgress(&pipe, false), nil))
	assert.Equal(t, "pulling manifest\npulling 3f2a5e1b0c44\npulling 62fbfd9ed093\nverifying sha256 digest\nwriting manifest\n",
		pipe.String(), "a line per step, none per percent")
}

func TestPullModel_Failures(t *testing.T) {
	ctx := context.Background()
	t.Run("unknown model, streamed", func(t *testing.T) {
		srv, _ := fakeOllamaPull(t, http.StatusOK, `{"status":"pulling manifest"}`, `{"error":"pull model manifest: file does not exist"}`)
		err := PullModel(ctx, srv.URL, "nosuch", nil, nil)
		require.Error(t, err)
		assert.Equal(t, "Ollama at "+srv.URL+" could not pull nosuch: pull model manifest: file does not exist", err.Error())
	})
	t.Run("refused", func(t *testing.T) {
		srv, _ := fakeOllamaPull(t, http.StatusInternalServerError, `{"error":"pull model manifest: file does not exist"}`)
		err := PullModel(ctx, srv.URL, "nosuch", nil, nil)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "would not pull nosuch: pull model manifest: file does not exist")
	})
	t.Run("cut short", func(t *testing.T) {
		srv, _ := fakeOllamaPull(t, http.StatusOK, pullLines[:3]...)
		err := PullModel(ctx, srv.URL, "qwen3:1.7b", nil, nil)
		assert.ErrorIs(t, err, errPullEnded)
	})
	t.Run("silent", func(t *testing.T) {
		srv, _ := fakeOllamaPull(t, http.StatusOK, pullLines[0], "STALL")
		err := PullModel(ctx, srv.URL, "qwen3:1.7b", nil, &PullOptions{Idle: 50 * time.Millisecond})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "sent nothing for 50ms")
	})
	t.Run("not Ollama", func(t *testing.T) {
		srv, _ := fakeOllamaPull(t, http.StatusOK, "<html>hello</html>")
		err := PullModel(ctx, srv.URL, "qwen3:1.7b", nil, nil)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "not Ollama's pull status")
	})
	t.Run("a line too long", func(t *testing.T) {
		srv, _ := fakeOllamaPull(t, http.StatusOK, `{"status":"`+strings.Repeat("x", maxPullLine)+`"}`)
		err := PullModel(ctx, srv.URL, "qwen3:1.7b", nil, nil)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "over 64 KiB")
	})
	t.Run("unreachable", func(t *testing.T) {
		srv, _ := fakeOllamaPull(t, http.StatusOK)
		srv.Close()
		err := PullModel(ctx, srv.URL, "qwen3:1.7b", nil, nil)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "cannot reach Ollama at "+srv.URL+": start it with \"ollama serve\"")
	})
}

func FuzzReadPull(f *testing.F) {
	f.Add([]byte(strings.Join(pullLines, "\n")))
	f.Add([]byte(`{"error":"x"}`))
	f.Add([]byte(`{"status":"pulling a","total":-5,"completed":99999999999}` + "\n" + `[]`))
	f.Add([]byte("\x00\xff{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var out bytes.Buffer
		p := toolset.NewProgress(&out, true).Every(0)
		_ = readPull(bytes.NewReader(data), p, func() {})
		for _, line := range strings.Split(out.String(), "\r\x1b[K") {
			assert.NotContains(t, line, "\n", "a status never breaks the line in place")
			assert.LessOrEqual(t, len([]rune(line)), toolset.ProgressWidth)
		}
	})
}

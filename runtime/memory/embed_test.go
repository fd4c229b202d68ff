package memory

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// embedServer fakes Ollama's POST /api/embed and OpenAI's POST
// /v1/embeddings: each text becomes [len(text), 1, 0]; reply, when set,
// replaces the body.
type embedServer struct {
	*httptest.Server
	calls  atomic.Int32
	auth   atomic.Value // last Authorization header
	status int
	reply  func(n int) string
}

func newEmbedServer(t *testing.T) *embedServer {
	s := &embedServer{status: http.StatusOK}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.calls.Add(1)
		s.auth.Store(r.Header.Get("Authorization"))
		var in struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&in) != nil || in.Model == "" {
			http.Error(w, `{"error":"bad request"}`, http.StatusBadRequest)
			return
		}
		if s.status != http.StatusOK {
			http.Error(w, `{"error":"model not found"}`, s.status)
			return
		}
		if s.reply != nil {
			fmt.Fprint(w, s.reply(len(in.Input)))
			return
		}
		switch r.URL.Path {
		case "/api/embed":
			var out struct {
				Model      string      `json:"model"`
				Embeddings [][]float32 `json:"embeddings"`
			}
			out.Model = in.Model
			for _, x := range in.Input {
				out.Embeddings = append(out.Embeddings, []float32{float32(len(x)), 1, 0})
			}
			json.NewEncoder(w).Encode(out)
		case "/v1/embeddings":
			type item struct {
				Object    string    `json:"object"`
				Index     int       `json:"index"`
				Embedding []float32 `json:"embedding"`
			}
			out := struct {
				Object string `json:"object"`
				Data   []item `json:"data"`
				Model  string `json:"model"`
			}{Object: "list", Model: in.Model}
			for i := len(in.Input) - 1; i >= 0; i-- { // out of order: index decides
				out.Data = append(out.Data, item{"embedding", i, []float32{float32(len(in.Input[i])), 1, 0}})
			}
			json.NewEncoder(w).Encode(out)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestEmbedders_WireFormats(t *testing.T) {
	srv := newEmbedServer(t)
	ol, err := NewEmbedder("ollama", "nomic-embed-text", srv.URL+"/v1/", nil, srv.Client())
	require.NoError(t, err)
	oa, err := NewEmbedder("openai", "text-embedding-3-small", "", env(map[string]string{
		"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": srv.URL + "/v1"}), srv.Client())
	require.NoError(t, err)
	assert.Equal(t, "ollama/nomic-embed-text", ol.Model())
	assert.Equal(t, "openai/text-embedding-3-small", oa.Model())
	assert.NotContains(t, fmt.Sprint(oa), "sk-test")

	texts := make([]string, 70) // three batches of at most 32
	for i := range texts {
		texts[i] = strings.Repeat("x", i+1)
	}
	for _, e := range []Embedder{ol, oa} {
		srv.calls.Store(0)
		vs, err := e.Embed(context.Background(), texts)
		require.NoError(t, err, e.Model())
		require.Len(t, vs, 70)
		for i, v := range vs {
			assert.Equal(t, []float32{float32(i + 1), 1, 0}, v)
		}
		assert.Equal(t, int32(3), srv.calls.Load())
	}
	assert.Equal(t, "Bearer sk-test", srv.auth.Load())
}

func TestEmbedders_BadReplies(t *testing.T) {
	const limit = 64 << 10
	huge := func(int) string { return `{"embeddings":[[` + strings.Repeat("1,", limit) + `1]]}` }
	cases := []struct {
		name   string
		status int
		reply  func(n int) string
		want   string
	}{
		{"http error", http.StatusNotFound, nil, "HTTP 404"},
		{"garbage", 200, func(int) string { return "<html>hi</html>" }, "not the expected JSON"},
		{"huge", 200, huge, "over 64 KiB"},
		{"too few", 200, func(int) string {
			return `{"embeddings":[[1,2]],"data":[{"index":0,"embedding":[1,2]}]}`
		}, "vectors for 2 texts"},
		{"mixed dims", 200, func(int) string {
			return `{"embeddings":[[1,2],[1,2,3]],"data":[{"index":0,"embedding":[1,2]},{"index":1,"embedding":[1]}]}`
		}, "check the model is an embedding model"},
		{"empty vectors", 200, func(int) string {
			return `{"embeddings":[[],[]],"data":[{"index":0,"embedding":[]},{"index":1,"embedding":[]}]}`
		}, "a vector of 0 components"},
		{"bad index", 200, func(int) string {
			return `{"embeddings":[],"data":[{"index":5,"embedding":[1]},{"index":5,"embedding":[1]}]}`
		}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := newEmbedServer(t)
			srv.status, srv.reply = c.status, c.reply
			for _, p := range []string{"ollama", "openai"} {
				e, err := NewEmbedder(p, "m", srv.URL+"/v1", nil, srv.Client())
				require.NoError(t, err)
				switch e := e.(type) { // a smaller cap than the real 16 MiB, for speed
				case *ollamaEmbedder:
					e.limit = limit
				case *openAIEmbedder:
					e.limit = limit
				}
				_, err = e.Embed(context.Background(), []string{"a", "b"})
				require.Error(t, err, p)
				assert.Contains(t, err.Error(), c.want, p)
				assert.Contains(t, err.Error(), p+" embeddings", "the error names the server")
			}
		})
	}
}

func TestNewEmbedder_Config(t *testing.T) {
	_, err := NewEmbedder("openai", "m", "", nil, nil)
	assert.ErrorContains(t, err, "export OPENAI_API_KEY")
	_, err = NewEmbedder("openrouter", "m", "", nil, nil)
	assert.ErrorContains(t, err, "export OPENROUTER_API_KEY")
	_, err = NewEmbedder("ollama", " ", "", nil, nil)
	assert.ErrorContains(t, err, "needs a model")
	_, err = NewEmbedder("voyage", "m", "", nil, nil)
	assert.ErrorContains(t, err, "use ollama, openai or openrouter")

	e, err := NewEmbedder("ollama", "m", "", env(map[string]string{"OLLAMA_HOST": "10.0.0.2:11434"}), nil)
	require.NoError(t, err)
	assert.Equal(t, "http://10.0.0.2:11434/api/embed", e.(*ollamaEmbedder).url)
	e, err = NewEmbedder("ollama", "m", "", nil, nil)
	require.NoError(t, err)
	assert.Equal(t, "http://127.0.0.1:11434/api/embed", e.(*ollamaEmbedder).url)
	e, err = NewEmbedder("openrouter", "m", "", env(map[string]string{"OPENROUTER_API_KEY": "k"}), nil)
	require.NoError(t, err)
	assert.Equal(t, "https://openrouter.ai/api/v1/embeddings", e.(*openAIEmbedder).url)
	e, err = NewEmbedder("openai", "m", "http://127.0.0.1:8080/v1", nil, nil)
	require.NoError(t, err, "a local server needs no key")
	assert.Equal(t, "http://127.0.0.1:8080/v1/embeddings", e.(*openAIEmbedder).url)
}

func TestEmbedders_ReplyCapIsReal(t *testing.T) {
	e, err := NewEmbedder("ollama", "m", "http://x", nil, nil)
	require.NoError(t, err)
	assert.Equal(t, int64(maxReply), e.(*ollamaEmbedder).limit)
}

// A server that never answers costs the caller its deadline, no more.
func TestEmbedders_Hang(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // then the server notices the client leave
		<-r.Context().Done()
	}))
	defer srv.Close()
	e, err := NewEmbedder("openai", "m", srv.URL+"/v1", nil, srv.Client())
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = e.Embed(ctx, []string{"a"})
	assert.ErrorIs(t, err, context.DeadlineExceeded)
}

package llmtest

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSplit(t *testing.T) {
	assert.Equal(t, []string{"a", "bc", "de"}, split("abcde", 3))
	assert.Equal(t, "héllo wörld", strings.Join(split("héllo wörld", 4), ""))
	assert.Equal(t, []string{"a ", "b ", "c"}, split("a b c", 0))
	assert.Len(t, split("ab", 10), 2)
	assert.Nil(t, split("", 3))
}

func TestServer_ScriptExhausted(t *testing.T) {
	s := NewServer(Ollama, Script())
	defer s.Close()
	resp, err := http.Post(s.URL+"/api/chat", "application/json", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusInternalServerError, resp.StatusCode)
	reqs := s.Requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, "hi", reqs[0].LastUser())
}

func TestServer_BadBody(t *testing.T) {
	s := NewServer(OpenAI, Echo())
	defer s.Close()
	resp, err := http.Post(s.BaseURL()+"/chat/completions", "application/json", strings.NewReader(`{"model":`))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
}

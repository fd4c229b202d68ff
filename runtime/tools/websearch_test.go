package tools

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// braveAnswer is the shape of Brave's WebSearchApiResponse, trimmed to a
// few of its fields.
const braveAnswer = `{"type":"search","query":{"original":"go generics","more_results_available":true},
"mixed":{"type":"mixed","main":[{"type":"web","index":0,"all":false}]},
"web":{"type":"search","family_friendly":true,"results":[
 {"type":"search_result","title":"Tutorial: Getting started with generics","url":"https://go.dev/doc/tutorial/generics",
  "is_source_local":false,"description":"This tutorial introduces the basics of <strong>generics</strong> in Go.","age":"March 22, 2022","language":"en"},
 {"type":"search_result","title":"No snippet","url":"https://example.org/","language":"en"}]}}`

func TestWeb_SearchBrave(t *testing.T) {
	var got *http.Request
	brave := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r
		if r.Header.Get("X-Subscription-Token") != "key-1" {
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"type":"ErrorResponse","error":{"code":"SUBSCRIPTION_TOKEN_INVALID","status":401}}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(braveAnswer))
	}))
	defer brave.Close()
	web := &Web{Search: &WebSearch{BraveKey: "key-1", BraveURL: brave.URL + "/res/v1/web/search"}}
	res, err := web.Run(t.Context(), []byte(`{"action":"search","query":"go generics","count":50}`))
	require.NoError(t, err)
	assert.False(t, res.IsError, res.Content)
	assert.Equal(t, "1. **Tutorial: Getting started with generics**\n   https://go.dev/doc/tutorial/generics\n"+
		"   This tutorial introduces the basics of <strong>generics</strong> in Go.\n\n"+
		"2. **No snippet**\n   https://example.org/\n   No description\n\n", res.Content)
	assert.Equal(t, "/res/v1/web/search", got.URL.Path)
	assert.Equal(t, "go generics", got.URL.Query().Get("q"))
	assert.Equal(t, "20", got.URL.Query().Get("count"), "count is kept to 1-20")
	assert.Equal(t, "application/json", got.Header.Get("Accept"))

	_, _ = web.Run(t.Context(), []byte(`{"action":"search","query":"x"}`))
	assert.Equal(t, "5", got.URL.Query().Get("count"), "count defaults to 5")

	web.Search.BraveKey = "wrong"
	res, _ = web.Run(t.Context(), []byte(`{"action":"search","query":"x"}`))
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "Brave Search API error (401 Unauthorized)")
}

func TestWeb_SearchSearXNG(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		assert.Equal(t, "/searx/search", r.URL.Path)
		assert.Equal(t, "json", r.URL.Query().Get("format"))
		json.NewEncoder(w).Encode(map[string]any{"query": r.URL.Query().Get("q"), "number_of_results": 0,
			"results": []map[string]any{{"url": "https://a.example/", "title": "A", "content": "About A", "engine": "ddg"},
				{"url": "https://b.example/", "title": "B", "content": "", "engine": "ddg"}}})
	}))
	defer srv.Close()
	web := &Web{Search: &WebSearch{SearXNG: srv.URL + "/searx/"}}
	res, err := web.Run(t.Context(), []byte(`{"action":"search","query":"a","count":1}`))
	require.NoError(t, err)
	assert.Equal(t, "1. **A**\n   https://a.example/\n   About A\n\n", res.Content)
}

func TestWeb_SearchNotConfigured(t *testing.T) {
	res, err := (&Web{}).Run(t.Context(), []byte(`{"action":"search","query":"x"}`))
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Equal(t, "error: web: "+errNoSearch.Error(), res.Content)
	res, _ = (&Web{}).Run(t.Context(), []byte(`{"action":"search"}`))
	assert.Contains(t, res.Content, "'query' is required")
	res, _ = (&Web{}).Run(t.Context(), []byte(`{"action":"browse"}`))
	assert.Contains(t, res.Content, `unknown action "browse"`)
}

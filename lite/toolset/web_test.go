package toolset

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/config"
)

func TestWebConfig_Search(t *testing.T) {
	_, err := config.Parse("agnx.yaml", []byte("web:\n  searxng_url: ftp://x\n"))
	assert.ErrorContains(t, err, `web.searxng_url "ftp://x" is not an http or https URL`)
	cfg, err := config.Parse("agnx.yaml", []byte("web:\n  searxng_url: http://127.0.0.1:8888\n"))
	require.NoError(t, err)
	t.Setenv("BRAVE_API_KEY", "k")
	s := webSearch(cfg)
	assert.Equal(t, "k", s.BraveKey)
	assert.Equal(t, "http://127.0.0.1:8888", s.SearXNG)
}

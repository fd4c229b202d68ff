package toolset

import (
	"os"

	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/runtime/tools"
)

// envBraveKey is the Brave Search API key web search uses; unset, it uses
// web.searxng_url.
const envBraveKey = "BRAVE_API_KEY"

// webSearch is the search backend of web tools: BRAVE_API_KEY, read once
// from the daemon's environment (sandboxes start with a cleared one, so it
// never reaches a tool), else web.searxng_url. An invalid URL leaves
// search unset; validation reports it.
func webSearch(cfg *config.Config) *tools.WebSearch {
	s := &tools.WebSearch{BraveKey: os.Getenv(envBraveKey)}
	if cfg.Web.Valid() {
		s.SearXNG = cfg.Web.SearXNGURL
	}
	return s
}

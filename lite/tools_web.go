package lite

import (
	"net/url"
	"os"

	"github.com/agnx-lite/agnx-lite/runtime/tools"
)

// WebConfig is the web tool's configuration (web: in the configuration
// file).
type WebConfig struct {
	// SearXNGURL is a SearXNG instance web search uses when BRAVE_API_KEY
	// is not set (its JSON format must be enabled).
	SearXNGURL string `yaml:"searxng_url"`
}

// valid reports whether the SearXNG URL is empty or an http(s) URL.
func (w WebConfig) valid() bool {
	if w.SearXNGURL == "" {
		return true
	}
	u, err := url.Parse(w.SearXNGURL)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// validateWeb checks web:.
func (c *Config) validateWeb() error {
	if c.Web.valid() {
		return nil
	}
	return c.errorf("web.searxng_url", "web.searxng_url %q is not an http or https URL: give the address of the SearXNG instance, e.g. http://127.0.0.1:8888", c.Web.SearXNGURL)
}

// envBraveKey is the Brave Search API key web search uses; unset, it uses
// web.searxng_url.
const envBraveKey = "BRAVE_API_KEY"

// webSearch is the search backend of web tools: BRAVE_API_KEY, read once
// from the daemon's environment (sandboxes start with a cleared one, so it
// never reaches a tool), else web.searxng_url. An invalid URL leaves
// search unset; validation reports it.
func webSearch(cfg *Config) *tools.WebSearch {
	s := &tools.WebSearch{BraveKey: os.Getenv(envBraveKey)}
	if cfg.Web.valid() {
		s.SearXNG = cfg.Web.SearXNGURL
	}
	return s
}

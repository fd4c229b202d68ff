package config

import "net/url"

// Web is the web tool's configuration (web: in the configuration
// file).
type Web struct {
	// SearXNGURL is a SearXNG instance web search uses when BRAVE_API_KEY
	// is not set (its JSON format must be enabled).
	SearXNGURL string `yaml:"searxng_url"`
}

// Valid reports whether the SearXNG URL is empty or an http(s) URL: web
// search uses it only then.
func (w Web) Valid() bool {
	if w.SearXNGURL == "" {
		return true
	}
	u, err := url.Parse(w.SearXNGURL)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// validateWeb checks web:.
func (c *Config) validateWeb() error {
	if c.Web.Valid() {
		return nil
	}
	return c.errorf("web.searxng_url", "web.searxng_url %q is not an http or https URL: give the address of the SearXNG instance, e.g. http://127.0.0.1:8888", c.Web.SearXNGURL)
}

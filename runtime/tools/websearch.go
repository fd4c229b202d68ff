package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// BraveURL is Brave Search's web search endpoint.
const BraveURL = "https://api.search.brave.com/res/v1/web/search"

// WebSearch is the search backend of the web tool: the Brave Search API
// when BraveKey is set (Agnx's, from BRAVE_API_KEY), else a SearXNG
// instance when SearXNG is set. The operator configures both, so the
// addresses are not checked the way fetched URLs are.
type WebSearch struct {
	BraveKey string
	// BraveURL is the endpoint; default BraveURL (tests point it at a fake).
	BraveURL string
	// SearXNG is the base URL of a SearXNG instance with its JSON format
	// enabled (search.formats: [html, json] in its settings.yml).
	SearXNG string
	// Client does the requests; default one with a 30 s timeout.
	Client *http.Client
}

// searchHit is one result, whichever backend gave it.
type searchHit struct{ Title, URL, Description string }

// maxSearchBody caps a backend's answer.
const maxSearchBody = 1 << 20

// errNoSearch is what search says when no backend is set.
var errNoSearch = errors.New("web search is not configured: set BRAVE_API_KEY in the daemon's environment, " +
	"or web.searxng_url in the configuration, and restart the daemon")

// search runs a query for at most count results.
func (s *WebSearch) search(ctx context.Context, query string, count int) ([]searchHit, error) {
	switch {
	case s == nil || (s.BraveKey == "" && s.SearXNG == ""):
		return nil, errNoSearch
	case s.BraveKey != "":
		return s.brave(ctx, query, count)
	default:
		return s.searxng(ctx, query, count)
	}
}

func (s *WebSearch) client() *http.Client {
	if s.Client != nil {
		return s.Client
	}
	return &http.Client{Timeout: 30 * time.Second}
}

// get fetches a backend's JSON answer into v.
func (s *WebSearch) get(ctx context.Context, backend, u string, header http.Header, v any) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header = header
	req.Header.Set("Accept", "application/json")
	resp, err := s.client().Do(req)
	if err != nil {
		return fmt.Errorf("%s did not answer (%v): try again later", backend, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxSearchBody))
	if err != nil {
		return fmt.Errorf("%s's answer could not be read (%v): try again later", backend, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s error (%s): %s", backend, resp.Status, strings.TrimSpace(string(body[:min(len(body), 500)])))
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%s's answer is not the JSON expected (%v): check the search configuration", backend, err)
	}
	return nil
}

// brave asks the Brave Search API (GET ?q=&count=, X-Subscription-Token).
func (s *WebSearch) brave(ctx context.Context, query string, count int) ([]searchHit, error) {
	endpoint := s.BraveURL
	if endpoint == "" {
		endpoint = BraveURL
	}
	var body struct {
		Web *struct {
			Results []struct {
				Title       string `json:"title"`
				URL         string `json:"url"`
				Description string `json:"description"`
			} `json:"results"`
		} `json:"web"`
	}
	u := endpoint + "?" + url.Values{"q": {query}, "count": {strconv.Itoa(count)}}.Encode()
	if err := s.get(ctx, "Brave Search API", u, http.Header{"X-Subscription-Token": {s.BraveKey}}, &body); err != nil {
		return nil, err
	}
	var hits []searchHit
	if body.Web != nil {
		for _, r := range body.Web.Results {
			hits = append(hits, searchHit{r.Title, r.URL, r.Description})
		}
	}
	return hits[:min(len(hits), count)], nil
}

// searxng asks a SearXNG instance (GET /search?q=&format=json).
func (s *WebSearch) searxng(ctx context.Context, query string, count int) ([]searchHit, error) {
	var body struct {
		Results []struct {
			Title   string `json:"title"`
			URL     string `json:"url"`
			Content string `json:"content"`
		} `json:"results"`
	}
	u := strings.TrimSuffix(s.SearXNG, "/") + "/search?" + url.Values{"q": {query}, "format": {"json"}}.Encode()
	if err := s.get(ctx, "SearXNG", u, http.Header{}, &body); err != nil {
		return nil, err
	}
	var hits []searchHit
	for _, r := range body.Results[:min(len(body.Results), count)] {
		hits = append(hits, searchHit{r.Title, r.URL, r.Content})
	}
	return hits, nil
}

// formatHits is Agnx's list: "N. **title**\n   url\n   description\n".
func formatHits(hits []searchHit) string {
	if len(hits) == 0 {
		return "No results found."
	}
	var b strings.Builder
	for i, h := range hits {
		desc := h.Description
		if desc == "" {
			desc = "No description"
		}
		fmt.Fprintf(&b, "%d. **%s**\n   %s\n   %s\n\n", i+1, h.Title, h.URL, desc)
	}
	return b.String()
}

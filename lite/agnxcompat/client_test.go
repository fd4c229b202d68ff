package agnxcompat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// This file ports the parent's AgentClient
// (crates/duragent-client/src/client/mod.rs): the same routes, the same
// bodies (serde_json: compact, fields in struct order, no HTML escaping),
// Content-Type: application/json from reqwest's .json(), the same success
// test (2xx) and error parsing.

// apiClient is AgentClient, plus the bearer token the parent sends when
// api_token is set.
type apiClient struct {
	base  string
	token string
	hc    *http.Client
}

func newAPIClient(base, token string) *apiClient {
	return &apiClient{base: strings.TrimRight(base, "/"), token: token, hc: &http.Client{Timeout: 10 * time.Second}}
}

// httpResult is a whole response.
type httpResult struct {
	Status int
	Header http.Header
	Body   []byte
}

func (r httpResult) String() string {
	return fmt.Sprintf("HTTP %d %s %q", r.Status, r.Header.Get("Content-Type"), r.Body)
}

// apiError is ClientError::ApiError; Error() is its Display, which the
// CLI matches ("no pending approval").
type apiError struct {
	Status  int
	Message string
}

func (e *apiError) Error() string { return fmt.Sprintf("api error (%d): %s", e.Status, e.Message) }

// serdeJSON serializes v as serde_json::to_vec does for the parent's
// request structs.
func serdeJSON(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// request sends method path; a non-nil body is sent as reqwest's .json().
func (c *apiClient) request(method, path string, body any) (httpResult, error) {
	if body == nil {
		return c.raw(method, path, "", nil)
	}
	return c.raw(method, path, "application/json", serdeJSON(body))
}

// raw sends any body with any content type ("" sends none), for the
// contract's error rows.
func (c *apiClient) raw(method, path, contentType string, body []byte) (httpResult, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		return httpResult{}, err
	}
	c.headers(req.Header, contentType)
	resp, err := c.hc.Do(req)
	if err != nil {
		return httpResult{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return httpResult{}, err
	}
	return httpResult{Status: resp.StatusCode, Header: resp.Header, Body: b}, nil
}

// headers are reqwest's defaults (Accept: */*, no User-Agent), the JSON
// content type and the bearer.
func (c *apiClient) headers(h http.Header, contentType string) {
	h.Set("Accept", "*/*")
	h.Set("User-Agent", "")
	if contentType != "" {
		h.Set("Content-Type", contentType)
	}
	if c.token != "" {
		h.Set("Authorization", "Bearer "+c.token)
	}
}

// parseError is parse_error: problem+json detail, else title, else
// "HTTP <status>".
func parseError(r httpResult) error {
	var p problemDetails
	if err := decodeStrict(r.Body, &p); err == nil {
		msg := *p.Title
		if p.Detail != nil {
			msg = *p.Detail
		}
		return &apiError{Status: r.Status, Message: msg}
	}
	return &apiError{Status: r.Status, Message: fmt.Sprintf("HTTP %d", r.Status)}
}

func success(status int) bool { return status >= 200 && status < 300 }

// jsonResponse is json_response: a 2xx body decoded into T (strictly), or
// the parsed error.
func jsonResponse[T any](r httpResult, err error) (T, error) {
	var v T
	if err != nil {
		return v, err
	}
	if !success(r.Status) {
		return v, parseError(r)
	}
	if err := decodeStrict(r.Body, &v); err != nil {
		return v, fmt.Errorf("decoding %T from %s: %w", v, r, err)
	}
	return v, nil
}

func (c *apiClient) health() (readyzResponse, error) {
	r, err := c.request("GET", "/readyz", nil)
	if err == nil && !success(r.Status) {
		return readyzResponse{}, fmt.Errorf("server unhealthy (status %d)", r.Status)
	}
	return jsonResponse[readyzResponse](r, err)
}

func (c *apiClient) listAgents() ([]agentSummary, error) {
	v, err := jsonResponse[listAgentsResponse](c.request("GET", "/api/v1/agents", nil))
	if err != nil {
		return nil, err
	}
	return *v.Agents, nil
}

func (c *apiClient) getAgent(name string) (agentDetailResponse, error) {
	return jsonResponse[agentDetailResponse](c.request("GET", "/api/v1/agents/"+name, nil))
}

func (c *apiClient) listSessions() ([]sessionSummary, error) {
	v, err := jsonResponse[listSessionsResponse](c.request("GET", "/api/v1/sessions", nil))
	if err != nil {
		return nil, err
	}
	return *v.Sessions, nil
}

type createSessionRequest struct {
	Agent string `json:"agent"`
}

// createSession decodes GetSessionResponse, as the parent does.
func (c *apiClient) createSession(agent string) (getSessionResponse, httpResult, error) {
	r, err := c.request("POST", "/api/v1/sessions", createSessionRequest{Agent: agent})
	v, err := jsonResponse[getSessionResponse](r, err)
	return v, r, err
}

func (c *apiClient) getSession(id string) (getSessionResponse, error) {
	return jsonResponse[getSessionResponse](c.request("GET", "/api/v1/sessions/"+id, nil))
}

func (c *apiClient) getMessages(id string, limit int) ([]messageResponse, error) {
	path := "/api/v1/sessions/" + id + "/messages"
	if limit > 0 {
		path += fmt.Sprintf("?limit=%d", limit)
	}
	v, err := jsonResponse[getMessagesResponse](c.request("GET", path, nil))
	if err != nil {
		return nil, err
	}
	return *v.Messages, nil
}

type sendMessageRequest struct {
	Content string `json:"content"`
}

// postMessage is send_message's request; the caller decodes per status
// (the parent's send_message decodes every 2xx as SendMessageResponse).
func (c *apiClient) postMessage(id, content string) (httpResult, error) {
	return c.request("POST", "/api/v1/sessions/"+id+"/messages", sendMessageRequest{Content: content})
}

type approveCommandRequest struct {
	CallID   string `json:"call_id"`
	Command  string `json:"command"`
	Decision string `json:"decision"`
}

func (c *apiClient) approveCommand(id, callID, command, decision string) (approveResponse, httpResult, error) {
	r, err := c.request("POST", "/api/v1/sessions/"+id+"/approve",
		approveCommandRequest{CallID: callID, Command: command, Decision: decision})
	v, err := jsonResponse[approveResponse](r, err)
	return v, r, err
}

// admin posts without a body and returns the text, as shutdown and
// reload_agents do.
func (c *apiClient) admin(action string) (string, httpResult, error) {
	r, err := c.request("POST", "/api/admin/v1/"+action, nil)
	if err != nil {
		return "", r, err
	}
	if !success(r.Status) {
		return "", r, parseError(r)
	}
	return string(r.Body), r, nil
}

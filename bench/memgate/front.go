package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/agnx-lite/agnx-lite/runtime/sse"
)

// The front-door workload: every oaTurnEvery-th turn goes through the
// OpenAI-compatible endpoint instead, to one of oaCallers callers of the
// agent its session would have used, streamed every other time. Each
// caller has one durable session, so the endpoint's session lookup, its
// resent-history handling and its stream run under the gate too.
const (
	oaTurnEvery = 25
	oaCallers   = 20
)

// oaTurn sends turn k's message as a chat completion of agent, with the
// history a client would resend (an earlier exchange), and checks the
// answer as turn does.
func oaTurn(c *http.Client, base, agent string, k int, cl call) error {
	stream := k/oaTurnEvery%2 == 1
	body, _ := json.Marshal(map[string]any{
		"model":  agent,
		"user":   fmt.Sprintf("gate-%d", k%oaCallers),
		"stream": stream,
		"messages": []map[string]string{
			{"role": "user", "content": "earlier"},
			{"role": "assistant", "content": "echo: earlier"},
			{"role": "user", "content": cl.message},
		},
	})
	resp, err := c.Post(base+"/v1/chat/completions", "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		return fmt.Errorf("openai endpoint: status %d: %s", resp.StatusCode, clip(b.Bytes()))
	}
	var answer string
	if stream {
		answer, err = oaStreamed(resp)
	} else {
		var r struct {
			Choices []struct {
				Message struct {
					Content string `json:"content"`
				} `json:"message"`
			} `json:"choices"`
		}
		err = json.NewDecoder(resp.Body).Decode(&r)
		if err == nil && len(r.Choices) == 1 {
			answer = r.Choices[0].Message.Content
		}
	}
	if err != nil {
		return fmt.Errorf("openai endpoint: %w", err)
	}
	if !strings.HasPrefix(answer, cl.want) {
		return fmt.Errorf("openai endpoint (stream %v): answer %q, want %q", stream, clip([]byte(answer)), cl.want)
	}
	return nil
}

// oaStreamed joins a streamed completion's content deltas.
func oaStreamed(resp *http.Response) (string, error) {
	var b strings.Builder
	r := sse.NewReader(resp.Body, 1<<20)
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			return "", fmt.Errorf("the stream ended without [DONE]")
		}
		if err != nil {
			return "", err
		}
		data := ev.Data
		if string(data) == "[DONE]" {
			return b.String(), nil
		}
		var chunk struct {
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
			Error *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(data, &chunk); err != nil {
			return "", fmt.Errorf("bad chunk %s: %w", clip(data), err)
		}
		if chunk.Error != nil {
			return "", fmt.Errorf("stream error: %s", chunk.Error.Message)
		}
		for _, ch := range chunk.Choices {
			b.WriteString(ch.Delta.Content)
		}
	}
}

// webEvery is how often (in turns) the workload loads the web page as a
// browser does: the page, its script and style (gzipped) and the health
// screen's facts.
const webEvery = 100

// webLoad fetches the web page's parts and checks each answers 200.
func webLoad(c *http.Client, base string) error {
	for _, p := range []string{"/", "/ui/app.js", "/ui/app.css", "/ui/chat.js", "/api/v1/health"} {
		req, err := http.NewRequest("GET", base+p, nil)
		if err != nil {
			return err
		}
		req.Header.Set("Accept-Encoding", "gzip")
		resp, err := c.Do(req)
		if err != nil {
			return fmt.Errorf("web page %s: %w", p, err)
		}
		var b bytes.Buffer
		_, err = b.ReadFrom(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			return fmt.Errorf("web page %s: status %d %v: %s", p, resp.StatusCode, err, clip(b.Bytes()))
		}
	}
	return nil
}

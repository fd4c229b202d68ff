package acpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite"
	"github.com/agnx-lite/agnx-lite/lite/acpserver"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// raw is the server driven line by line, as a client that writes garbage.
type raw struct {
	t      testing.TB
	in     *io.PipeWriter
	lines  chan string
	served chan error
}

func startRaw(t testing.TB, app *lite.App, o acpserver.Options) *raw {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	r := &raw{t: t, in: inW, lines: make(chan string, 64), served: make(chan error, 1)}
	go func() {
		r.served <- acpserver.Serve(context.Background(), &acpserver.Local{Loop: app.Loop}, inR, outW, o)
		outW.Close()
	}()
	go func() {
		defer close(r.lines)
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			r.lines <- sc.Text()
		}
	}()
	return r
}

func (r *raw) send(line string) {
	_, err := io.WriteString(r.in, line+"\n")
	require.NoError(r.t, err)
}

// next is the next line the server wrote, decoded; every line must be a
// JSON-RPC 2.0 object.
func (r *raw) next() map[string]any {
	select {
	case l, ok := <-r.lines:
		require.True(r.t, ok, "the server closed its output")
		var m map[string]any
		d := json.NewDecoder(strings.NewReader(l))
		d.UseNumber() // ids such as 1e400 are echoed as they came
		require.NoError(r.t, d.Decode(&m), "not JSON: %s", l)
		require.Equal(r.t, "2.0", m["jsonrpc"], l)
		return m
	case <-time.After(30 * time.Second):
		r.t.Fatal("no answer from the server")
		return nil
	}
}

// close ends the input and checks that Serve returns nil.
func (r *raw) close() {
	r.in.Close()
	for range r.lines {
	}
	require.NoError(r.t, <-r.served)
}

func errCode(m map[string]any) float64 {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(json.Number)
	f, _ := c.Float64()
	return f
}

func errMessage(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	s, _ := e["message"].(string)
	return s
}

// Malformed lines, unknown methods and oversized messages get the right
// JSON-RPC errors, with the request's id when there is one, and the
// server goes on answering.
func TestServe_MalformedInput(t *testing.T) {
	h := newHome(t, llmtest.Echo(), "")
	app, err := lite.Open(h.cfg, nil)
	require.NoError(t, err)
	defer app.Close()
	r := startRaw(t, app, acpserver.Options{Agent: h.cfg.Runtime.DefaultAgent, MaxLine: 2048, MaxPrompt: 100})

	big := `{"jsonrpc":"2.0","id":10,"method":"session/prompt","params":{"sessionId":"x","prompt":[{"type":"text","text":"` +
		strings.Repeat("x", 4096) + `"}]}}`
	for _, tc := range []struct {
		line string
		id   any
		code float64
	}{
		{"this is not json", nil, -32700},
		{`{"jsonrpc":"2.0","id":1,"method":"initialize"`, nil, -32700},
		{`[{"jsonrpc":"2.0","id":2,"method":"initialize"}]`, nil, -32600},
		{`42`, nil, -32600},
		{`{"jsonrpc":"2.0","id":3,"method":"no/such/method","params":{}}`, json.Number("3"), -32601},
		{`{"jsonrpc":"2.0","id":"s4","method":"_vendor/thing","params":{}}`, "s4", -32601},
		{`{"jsonrpc":"2.0","id":5,"method":17}`, json.Number("5"), -32600},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"initialize"}`, nil, -32600},
		{`{"jsonrpc":"2.0"}`, nil, -32600},
		{`{"jsonrpc":"2.0","id":6,"method":"session/new","params":"nope"}`, json.Number("6"), -32602},
		{`{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"sessionId":"session_x","prompt":[{"type":"text","text":"hi"}]}}`, json.Number("7"), -32002},
		{big, json.Number("10"), -32600},
	} {
		r.send(tc.line)
		m := r.next()
		assert.Equal(t, tc.id, m["id"], tc.line)
		assert.Equal(t, tc.code, errCode(m), "%s → %v", tc.line, m)
		assert.NotEmpty(t, errMessage(m))
	}

	// Notifications are never answered, unknown ones included.
	r.send(`{"jsonrpc":"2.0","method":"no/such/notification","params":{}}`)
	r.send(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"session_x"}}`)
	r.send(`{"jsonrpc":"2.0","id":20,"method":"initialize","params":{"protocolVersion":1}}`)
	m := r.next()
	assert.Equal(t, json.Number("20"), m["id"])
	assert.NotNil(t, m["result"], "%v", m)

	// A prompt over MaxPrompt, yet within MaxLine, is refused as such.
	r.send(`{"jsonrpc":"2.0","id":21,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}`)
	m = r.next()
	sid := m["result"].(map[string]any)["sessionId"].(string)
	r.send(`{"jsonrpc":"2.0","id":22,"method":"session/prompt","params":{"sessionId":"` + sid + `","prompt":[{"type":"text","text":"` + strings.Repeat("y", 101) + `"}]}}`)
	m = r.next()
	assert.Equal(t, float64(-32602), errCode(m))
	assert.Equal(t, "the prompt is over 100 bytes: send less text, or link large files instead of embedding them", errMessage(m))
	r.close()
}

// Requests in flight are capped: past MaxInFlight a request is refused
// at once, and the count goes down as answers go out.
func TestServe_RequestsInFlightBounded(t *testing.T) {
	h := newHome(t, llmtest.Echo(), "")
	app, err := lite.Open(h.cfg, nil)
	require.NoError(t, err)
	defer app.Close()
	r := startRaw(t, app, acpserver.Options{Agent: h.cfg.Runtime.DefaultAgent, MaxInFlight: 1})
	r.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	assert.NotNil(t, r.next()["result"])
	r.send(`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":1}}`)
	assert.NotNil(t, r.next()["result"], "the first answer freed its place")
	r.close()
}

// FuzzServerInput feeds random lines to the server: it must answer only
// JSON-RPC, never crash, and still answer a good request after them.
func FuzzServerInput(f *testing.F) {
	for _, s := range []string{
		"not json",
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`,
		`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}`,
		`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"image","data":"x","mimeType":"image/png"}]}}`,
		`{"jsonrpc":"2.0","id":4,"method":"session/load","params":{"sessionId":"session_01","cwd":"/","mcpServers":[]}}`,
		`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":1}}`,
		`{"jsonrpc":"2.0","id":null,"method":"initialize"}`,
		`{"jsonrpc":"2.0","id":5,"result":{}}`,
		`{"jsonrpc":"2.0","id":6,"error":"x"}`,
		`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":[1]}}`,
		"[]\n{}\n\"\"\nnull",
		`{"jsonrpc":"2.0","id":1e400,"method":"x"}`,
	} {
		f.Add([]byte(s))
	}
	h := newHome(f, llmtest.Echo(), "")
	app, err := lite.Open(h.cfg, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { app.Close() })
	f.Fuzz(func(t *testing.T, data []byte) {
		r := startRaw(t, app, acpserver.Options{Agent: h.cfg.Runtime.DefaultAgent, MaxLine: 64 << 10})
		go func() {
			_, _ = r.in.Write(append(data, '\n'))
			_, _ = io.WriteString(r.in, `{"jsonrpc":"2.0","id":"fuzz-end","method":"initialize","params":{"protocolVersion":1}}`+"\n")
		}()
		for {
			m := r.next()
			if m["id"] == "fuzz-end" && m["result"] != nil {
				break // a request of the input's with that id may have been answered first
			}
		}
		r.close()
	})
}

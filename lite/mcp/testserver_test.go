package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/bwrap"
	"github.com/agnx-lite/agnx-lite/ci/testenv"
)

// serverEnv, when set, makes the test binary an MCP server on its stdin
// and stdout, of the kind it names (see testServer).
const serverEnv = "AGNX_MCP_TEST_SERVER"

func TestMain(m *testing.M) {
	bwrap.Init() // the test binary is the sandbox's init too
	if mode := os.Getenv(serverEnv); mode != "" {
		if err := testServer(mode, true).Run(context.Background(), &sdk.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, "test server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type echoIn struct {
	Text string `json:"text"`
}

// none is the input of the tools that take no arguments.
type none struct{}

type echoOut struct {
	Echoed string `json:"echoed"`
	Length int    `json:"length"`
}

func echo(_ context.Context, _ *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, echoOut, error) {
	return nil, echoOut{Echoed: in.Text, Length: len(in.Text)}, nil
}

// testServer is an MCP server written with the SDK: echo (structured
// result), fail (an error result), change (adds a tool: list_changed), a
// resource; in a process of its own also crash and hang. mode many adds
// 10,000 tools, big one tool with a 5 MB schema.
func testServer(mode string, process bool) *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "test", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "echo", Description: "Echoes its text."}, echo)
	sdk.AddTool(srv, &sdk.Tool{Name: "fail", Description: "Fails."},
		func(context.Context, *sdk.CallToolRequest, none) (*sdk.CallToolResult, any, error) {
			return nil, nil, fmt.Errorf("failed on purpose")
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "change", Description: "Adds the tool added."},
		func(context.Context, *sdk.CallToolRequest, none) (*sdk.CallToolResult, any, error) {
			sdk.AddTool(srv, &sdk.Tool{Name: "added", Description: "Was added."}, echo)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "changed"}}}, nil, nil
		})
	srv.AddResource(&sdk.Resource{URI: "test://hello", Name: "hello", MIMEType: "text/plain"},
		func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, Text: "hello world"}}}, nil
		})
	if process {
		sdk.AddTool(srv, &sdk.Tool{Name: "crash", Description: "Exits mid-call."},
			func(context.Context, *sdk.CallToolRequest, none) (*sdk.CallToolResult, any, error) {
				fmt.Fprintln(os.Stderr, "crashing on purpose")
				os.Exit(3)
				return nil, nil, nil
			})
		sdk.AddTool(srv, &sdk.Tool{Name: "hang", Description: "Never answers."},
			func(context.Context, *sdk.CallToolRequest, none) (*sdk.CallToolResult, any, error) {
				select {} // ignores its context too
			})
		sdk.AddTool(srv, &sdk.Tool{Name: "env", Description: "Says its environment."},
			func(context.Context, *sdk.CallToolRequest, none) (*sdk.CallToolResult, any, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Join(os.Environ(), "\n")}}}, nil, nil
			})
		sdk.AddTool(srv, &sdk.Tool{Name: "pid", Description: "Says its pid."},
			func(context.Context, *sdk.CallToolRequest, none) (*sdk.CallToolResult, any, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strconv.Itoa(os.Getpid())}}}, nil, nil
			})
	}
	raw := func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{}, nil
	}
	switch mode {
	case "many":
		for i := range 10_000 {
			srv.AddTool(&sdk.Tool{Name: "t" + strconv.Itoa(i), InputSchema: json.RawMessage(`{"type":"object"}`)}, raw)
		}
	case "big":
		srv.AddTool(&sdk.Tool{Name: "big", InputSchema: bigSchema(5 << 20)}, raw)
		srv.AddTool(&sdk.Tool{Name: "long", Description: strings.Repeat("d", 5000),
			InputSchema: json.RawMessage(`{"type":"object"}`)}, raw)
	}
	return srv
}

// bigSchema is an object schema of about n bytes.
func bigSchema(n int) json.RawMessage {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	for i := 0; b.Len() < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"p%d":{"type":"string","description":"%s"}`, i, strings.Repeat("x", 1000))
	}
	b.WriteString(`}}`)
	return json.RawMessage(b.String())
}

// testLimits lets the test binary run as a server under the race
// detector, which reserves terabytes of address space.
var testLimits = bwrap.Limits{MemoryMB: 1 << 30}

// spawnDirect starts a stdio server as lite/sandbox's SpawnMCP would, in
// trust mode (the init, then the command; no bubblewrap), counting starts.
type spawnDirect struct {
	mu     sync.Mutex
	starts int
	pids   []int
}

func (d *spawnDirect) spawn(ctx context.Context, workspace string, s Server) (*bwrap.Process, error) {
	p, err := (&bwrap.Runner{Trust: true}).Start(ctx, bwrap.Policy{Workspace: workspace, Env: s.Env, Limits: testLimits},
		append([]string{s.Command}, s.Args...))
	if err == nil {
		d.mu.Lock()
		d.starts++
		d.pids = append(d.pids, p.Pid)
		d.mu.Unlock()
	}
	return p, err
}

func (d *spawnDirect) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.starts
}

// stdioServer is the entry of a test server of mode run by this binary.
func stdioServer(t testing.TB, name, mode string) Server {
	t.Helper()
	testenv.SkipIfNoReexec(t, "the stdio MCP server is the re-executed test binary")
	exe, err := os.Executable()
	require.NoError(t, err)
	return Server{Name: name, Transport: TransportStdio, Command: exe, Env: map[string]string{serverEnv: "${env:MODE}"}}
}

// modeEnv is an Options.Env giving MODE.
func modeEnv(mode string) func(string) string {
	return func(k string) string {
		if k == "MODE" {
			return mode
		}
		return ""
	}
}

// mapCache is a Cache in memory.
type mapCache struct {
	mu   sync.Mutex
	m    map[string][]byte
	puts int
}

func (c *mapCache) Get(_ context.Context, key string) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[key], nil
}

func (c *mapCache) Put(_ context.Context, key string, val []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string][]byte{}
	}
	c.puts++
	if val == nil {
		delete(c.m, key)
		return nil
	}
	c.m[key] = val
	return nil
}

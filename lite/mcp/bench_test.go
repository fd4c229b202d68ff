package mcp

import (
	"context"
	"encoding/json"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// inProcess makes m dial an in-process server of the SDK over a pipe.
func inProcess(b testing.TB, m *Manager) {
	m.dial = func(ctx context.Context, _ Server) (sdk.Transport, error) {
		st, ct := sdk.NewInMemoryTransports()
		if _, err := testServer("plain", false).Connect(ctx, st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}
}

func benchCall(b *testing.B, m *Manager, srv Server) {
	tools, warns := m.Tools(context.Background(), "a", b.TempDir(), []Server{srv})
	require.Empty(b, warns)
	echo := find(b, tools, srv.Name+"__echo")
	args := []byte(`{"text":"hello"}`)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res, err := echo.Run(context.Background(), args)
		if err != nil || res.IsError {
			b.Fatal(err, res.Content)
		}
	}
}

// BenchmarkMCPCall is the overhead of one tool call through the manager
// and the SDK: in process (the protocol alone) and to a stdio server.
func BenchmarkMCPCall(b *testing.B) {
	b.Run("inprocess", func(b *testing.B) {
		m := newManager(b, Options{})
		inProcess(b, m)
		benchCall(b, m, Server{Name: "s", Command: "unused"})
	})
	b.Run("inprocess-sdk-alone", func(b *testing.B) { // the reference: the SDK without the manager
		st, ct := sdk.NewInMemoryTransports()
		_, err := testServer("plain", false).Connect(context.Background(), st, nil)
		require.NoError(b, err)
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "b", Version: "1"}, nil).Connect(context.Background(), ct, nil)
		require.NoError(b, err)
		defer cs.Close()
		params := &sdk.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"text":"hello"}`)}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := cs.CallTool(context.Background(), params); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("stdio", func(b *testing.B) {
		d := &spawnDirect{}
		m := newManager(b, Options{Spawn: d.spawn, Env: modeEnv("plain")})
		benchCall(b, m, stdioServer(b, "s", "plain"))
	})
}

// BenchmarkMCPColdStart is a stdio server's spawn, initialize and tool
// list: what the first call of a server with no cached list costs.
func BenchmarkMCPColdStart(b *testing.B) {
	d := &spawnDirect{}
	srv := stdioServer(b, "s", "plain")
	ws := b.TempDir()
	for b.Loop() {
		m := NewManager(Options{Spawn: d.spawn, Env: modeEnv("plain")})
		var tools []runtime.Tool
		tools, warns := m.Tools(context.Background(), "a", ws, []Server{srv})
		if len(warns) > 0 || len(tools) == 0 {
			b.Fatal(warns)
		}
		b.StopTimer()
		_ = m.Close(context.Background())
		b.StartTimer()
	}
}

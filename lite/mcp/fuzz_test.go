package mcp

import (
	"encoding/json"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// FuzzObjectArgs: a model's arguments either pass as a JSON object or
// are refused, never panic.
func FuzzObjectArgs(f *testing.F) {
	for _, s := range []string{``, `{}`, `{"a":1}`, `[1]`, `"x"`, `{`, ` {"a": [1, {"b": null}]} `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		raw, err := objectArgs(args)
		if err == nil {
			require.True(t, json.Valid(raw))
			require.Equal(t, byte('{'), raw[0])
		}
	})
}

// FuzzToolList: whatever tools a server lists (as JSON), what is kept
// stays within the limits.
func FuzzToolList(f *testing.F) {
	for _, s := range []string{`[]`, `[{"name":"a","inputSchema":{"type":"object"}}]`, `[null,{"name":""}]`,
		`[{"name":"x","description":"d","inputSchema":[1,2]}]`, `[{"name":"\u00e9\u00e9","inputSchema":"s"}]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var tools []*sdk.Tool
		if json.Unmarshal(data, &tools) != nil {
			return
		}
		k := &listSink{server: "s"}
		kept := k.take(tools)
		l := k.result(false)
		require.Len(t, kept, len(l.Tools))
		require.LessOrEqual(t, len(l.Tools), maxTools)
		for _, d := range l.Tools {
			require.LessOrEqual(t, len(d.Schema), maxSchema)
			require.True(t, json.Valid(d.Schema))
			require.LessOrEqual(t, len(d.Description), maxDescription+len("…"))
		}
	})
}

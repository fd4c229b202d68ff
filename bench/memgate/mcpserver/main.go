// Command mcpserver is a small stdio MCP server built with the official Go
// SDK: the memory gate's MCP workload, and a peer the tests run through
// the real wiring. Its tools: echo (text and a structured result), add,
// and report (a reply of a given size, as a server answering with a
// document would).
package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type echoIn struct {
	Text string `json:"text" jsonschema:"what to echo back"`
}

type echoOut struct {
	Echo string `json:"echo"`
}

type addIn struct {
	A float64 `json:"a" jsonschema:"first number"`
	B float64 `json:"b" jsonschema:"second number"`
}

type addOut struct {
	Sum float64 `json:"sum"`
}

type reportIn struct {
	KB int `json:"kb" jsonschema:"size of the report in KiB (1 to 256)"`
}

func main() {
	s := mcp.NewServer(&mcp.Implementation{Name: "agnx-memgate", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes its text."},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, echoOut, error) {
			return text("echo: " + in.Text), echoOut{Echo: in.Text}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Adds two numbers."},
		func(_ context.Context, _ *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, addOut, error) {
			sum := in.A + in.B
			return text(fmt.Sprintf("%g + %g = %g", in.A, in.B, sum)), addOut{Sum: sum}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "report", Description: "Writes a report of the given size."},
		func(_ context.Context, _ *mcp.CallToolRequest, in reportIn) (*mcp.CallToolResult, any, error) {
			kb := min(max(in.KB, 1), 256)
			return text(strings.Repeat("All work and no play makes a dull report.\n", kb*1024/43+1)[:kb*1024]), nil, nil
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "mcpserver:", err)
		os.Exit(1)
	}
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

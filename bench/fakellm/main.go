// Command fakellm serves a fake Ollama, OpenAI-compatible or Anthropic API on
// loopback that answers instantly (llmtest.Echo): "echo: <message>", and a
// tool call when a message says "use TOOL {args}". Benchmarks, the memory
// gate and hand tests point agents at it; it prints its base URL.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

func main() {
	kind := flag.String("kind", "ollama", "wire format: ollama, openai or anthropic")
	flag.Parse()
	srv := llmtest.NewServer(llmtest.Kind(*kind), llmtest.Echo())
	defer srv.Close()
	fmt.Println(srv.BaseURL())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
}

package memory_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agnx-lite/agnx-lite/runtime/memory"
)

// The memory tool over an agent's bank: what the model's calls do to the
// plain files.
func ExampleTool() {
	dir, _ := os.MkdirTemp("", "bank")
	defer os.RemoveAll(dir)
	bank := memory.NewBank(memory.BankOptions{
		AgentDir: filepath.Join(dir, "agents", "bob"),
		WorldDir: filepath.Join(dir, "memory", "world"),
		Now:      func() time.Time { return time.Date(2026, 11, 20, 14, 5, 0, 0, time.Local) },
	})
	_ = os.MkdirAll(filepath.Join(dir, "agents", "bob"), 0o755)
	tool := &memory.Tool{Bank: bank}
	for _, args := range []string{
		`{"action":"remember","content":"The user's cat is called Miso."}`,
		`{"action":"update_world","topic":"Pets","content":"Miso: a grey cat."}`,
		`{"action":"recall","days":1}`,
	} {
		res, _ := tool.Run(context.Background(), []byte(args))
		fmt.Println(strings.ReplaceAll(res.Content, dir, "$DIR"))
		fmt.Println("==")
	}
	// Output:
	// Remembered. Written to $DIR/agents/bob/memory/daily/2026-11-20.md
	// ==
	// Updated world knowledge at $DIR/memory/world/pets.md
	// ==
	// # World Knowledge
	//
	// ## pets
	//
	// Miso: a grey cat.
	//
	// ---
	//
	// # Recent Experiences
	//
	// # 2026-11-20
	//
	// ## 14:05
	//
	// The user's cat is called Miso.
	//
	// ==
}

package e2e

import (
	"strings"
	"sync"

	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// model is the fake provider's behaviour: llmtest.Echo, except that a
// message starting with "gate" is answered only once the test opens the
// gate (so a connection can drop while the turn runs), and one starting
// with "stall" streams a few words and then hangs until the daemon gives
// up on it (a turn to cancel).
type model struct {
	once    sync.Once
	gate    chan struct{}
	closing chan struct{}
}

func newModel() *model { return &model{gate: make(chan struct{}), closing: make(chan struct{})} }

func (m *model) release() { m.once.Do(func() { close(m.gate) }) }

func (m *model) handle(r llmtest.RecordedRequest) llmtest.Reply {
	text := r.LastUser()
	switch {
	case r.Last().Role == "tool":
	case strings.HasPrefix(text, "gate"):
		select {
		case <-m.gate:
		case <-m.closing:
		}
	case strings.HasPrefix(text, "stall"):
		return llmtest.Reply{Text: "partial answer that never ends", Chunks: 4, Fault: llmtest.Stall, FaultAfter: 2}
	}
	return llmtest.Echo()(r)
}

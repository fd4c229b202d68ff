package workers

import (
	"context"
	"sync"
	"time"
)

// progressEvery is how often a worker's progress reaches the parent
// session at most.
const progressEvery = 300 * time.Millisecond

// maxProgressLine bounds one progress line.
const maxProgressLine = 200

// progress coalesces a worker's progress lines: one goes out at once,
// the next ones within progressEvery replace each other and the last
// goes out with the next line after it, or at flush. No timer: a quiet
// worker costs nothing.
type progress struct {
	send func(context.Context, string)
	ctx  context.Context

	mu      sync.Mutex
	last    time.Time
	pending string
}

func (p *progress) say(line string) {
	if line == "" {
		return
	}
	line = cut(line, maxProgressLine)
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if now.Sub(p.last) < progressEvery {
		p.pending = line
		return
	}
	p.last, p.pending = now, ""
	p.send(p.ctx, line)
}

func (p *progress) flush() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pending != "" {
		p.send(p.ctx, p.pending)
		p.pending = ""
	}
}

package lite

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// notifier delivers the notifications of agents' policies: to the log at
// once, to webhooks from one worker with a bounded queue (a slow webhook
// drops notifications, never stalls the loop).
type notifier struct {
	log   *slog.Logger
	once  sync.Once
	queue chan webhookPost
}

type webhookPost struct {
	url  string
	body []byte
}

func newNotifier(log *slog.Logger) *notifier {
	return &notifier{log: log, queue: make(chan webhookPost, 16)}
}

func (n *notifier) notify(x runtime.Notification) {
	for _, d := range x.Deliveries {
		switch d.Type {
		case "log":
			n.log.Info("policy notification", "session", x.Session, "agent", x.Agent, "tool", x.Tool,
				"subject", x.Subject, "decision", x.Decision)
		case "webhook":
			body, _ := json.Marshal(map[string]string{"session_id": x.Session, "agent": x.Agent, "tool": x.Tool,
				"subject": x.Subject, "decision": x.Decision, "time": time.Now().UTC().Format(time.RFC3339)})
			n.once.Do(func() { go n.work() })
			select {
			case n.queue <- webhookPost{d.URL, body}:
			default:
				n.log.Warn("notification webhook queue full; dropped one", "url", d.URL)
			}
		}
	}
}

func (n *notifier) work() {
	client := &http.Client{Timeout: 5 * time.Second}
	for p := range n.queue {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url, bytes.NewReader(p.body))
		if err == nil {
			req.Header.Set("Content-Type", "application/json")
			var resp *http.Response
			if resp, err = client.Do(req); err == nil {
				resp.Body.Close()
			}
		}
		if err != nil {
			n.log.Warn("notification webhook failed", "err", err)
		}
		cancel()
	}
}

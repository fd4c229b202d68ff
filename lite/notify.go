package lite

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// Webhook bounds: one post gets webhookTimeout; at shutdown the posts still
// queued get webhookDrain in all, then the rest are dropped.
const (
	webhookTimeout = 5 * time.Second
	webhookDrain   = 5 * time.Second
	webhookQueue   = 16
)

// notifier delivers the notifications of agents' policies: to the log at
// once, to webhooks from one worker with a bounded queue (a slow webhook
// drops notifications, never stalls the loop). Its owner (App) calls close
// once the loop, the only caller of notify, has stopped.
type notifier struct {
	log   *slog.Logger
	queue chan webhookPost
	// stop is closed by close: the worker posts what is queued until
	// drain passes (then cancel cancels the post in flight and the rest
	// are dropped), returns and closes done.
	stop   chan struct{}
	done   chan struct{}
	cancel context.CancelFunc
	drain  time.Duration
}

type webhookPost struct {
	url  string
	body []byte
}

// newNotifier starts the webhook worker; close stops it.
func newNotifier(log *slog.Logger) *notifier {
	n := &notifier{log: log, queue: make(chan webhookPost, webhookQueue),
		stop: make(chan struct{}), done: make(chan struct{}), drain: webhookDrain}
	ctx, cancel := context.WithCancel(context.Background())
	n.cancel = cancel
	go n.work(ctx)
	return n
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
			select {
			case <-n.stop:
				n.log.Warn("notification webhook after shutdown; dropped one", "url", d.URL)
			case n.queue <- webhookPost{d.URL, body}:
			default:
				n.log.Warn("notification webhook queue full; dropped one", "url", d.URL)
			}
		}
	}
}

// close stops the worker and waits for it: what is queued is posted until
// drain passes; a post still running then is cancelled.
func (n *notifier) close() {
	close(n.stop)
	t := time.AfterFunc(n.drain, n.cancel)
	<-n.done
	t.Stop()
	n.cancel()
}

func (n *notifier) work(ctx context.Context) {
	defer close(n.done)
	// Its own transport, so that the connections it keeps open go with it.
	client := &http.Client{Timeout: webhookTimeout, Transport: http.DefaultTransport.(*http.Transport).Clone()}
	defer client.CloseIdleConnections()
	for {
		select {
		case p := <-n.queue:
			n.post(ctx, client, p)
		case <-n.stop:
			n.flush(ctx, client)
			return
		}
	}
}

// flush posts what is queued at shutdown, until ctx ends.
func (n *notifier) flush(ctx context.Context, client *http.Client) {
	for {
		select {
		case p := <-n.queue:
			if ctx.Err() != nil {
				n.log.Warn("notification webhook not sent before shutdown; dropped one", "url", p.url)
				continue
			}
			n.post(ctx, client, p)
		default:
			return
		}
	}
}

func (n *notifier) post(ctx context.Context, client *http.Client, p webhookPost) {
	ctx, cancel := context.WithTimeout(ctx, webhookTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url, bytes.NewReader(p.body))
	if err == nil {
		req.Header.Set("Content-Type", "application/json")
		var resp *http.Response
		if resp, err = client.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // lets the connection be reused
			resp.Body.Close()
		}
	}
	if err != nil {
		n.log.Warn("notification webhook failed", "err", err)
	}
}

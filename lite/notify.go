package lite

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"time"

	"github.com/agnx-lite/agnx-lite/agents"
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
	// allowLoopback lets webhooks reach this host (tests' httptest).
	allowLoopback bool
}

type webhookPost struct {
	url  string
	body []byte
}

// newNotifier starts the webhook worker; close stops it.
func newNotifier(log *slog.Logger) *notifier {
	return startNotifier(&notifier{log: log})
}

func startNotifier(n *notifier) *notifier {
	n.queue, n.stop, n.done = make(chan webhookPost, webhookQueue), make(chan struct{}), make(chan struct{})
	if n.drain == 0 {
		n.drain = webhookDrain
	}
	ctx, cancel := context.WithCancel(context.Background())
	n.cancel = cancel
	go n.work(ctx)
	return n
}

// maxNotifiedCommand is how much of a command a notification carries.
const maxNotifiedCommand = 4 << 10

// notify reports one executed call: to the log, and to the webhooks
// queued (the parent's body, {"event":"command_notification",
// "session_id", "agent", "command", "success"}, plus tool, tool_type and
// time). A policy that names no delivery logs.
func (n *notifier) notify(x runtime.Notification) {
	deliveries := x.Deliveries
	if len(deliveries) == 0 {
		deliveries = []agents.Delivery{{Type: "log"}}
	}
	cmd := x.Command
	if len(cmd) > maxNotifiedCommand {
		cmd = strings.ToValidUTF8(cmd[:maxNotifiedCommand], "") + "…"
	}
	for _, d := range deliveries {
		switch d.Type {
		case "log":
			n.log.Info("command notification", "session", x.Session, "agent", x.Agent, "tool", x.Tool,
				"tool_type", x.Type, "command", cmd, "success", x.Success)
		case "webhook":
			body, _ := json.Marshal(map[string]any{"event": "command_notification", "session_id": x.Session,
				"agent": x.Agent, "command": cmd, "success": x.Success, "tool": x.Tool, "tool_type": x.Type,
				"time": time.Now().UTC().Format(time.RFC3339)})
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
	// Its own transport, so that the connections it keeps open go with it,
	// and a dialer that refuses addresses a webhook has no business with.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil // the address checked is the one dialled
	dialer := &net.Dialer{Timeout: webhookTimeout, Control: webhookDialControl(n.allowLoopback)}
	tr.DialContext = dialer.DialContext
	client := &http.Client{Timeout: webhookTimeout, Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
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

// errWebhookAddress is why a webhook on a refused address was not posted.
var errWebhookAddress = errors.New("a notification webhook may not post to a loopback, link-local (cloud metadata), " +
	"unspecified or multicast address: use the host's network address, or a log delivery")

// webhookDialControl refuses, at the moment of connecting (after DNS, so
// a name that resolves there is caught too), the addresses of this host
// and of its link: the daemon's own API, services listening on
// localhost, cloud metadata at 169.254.169.254. Private network addresses
// (a home server's webhook) are allowed.
func webhookDialControl(allowLoopback bool) func(network, address string, _ syscall.RawConn) error {
	return func(network, address string, _ syscall.RawConn) error {
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			return err
		}
		ip, err := netip.ParseAddr(host)
		if err != nil {
			return err
		}
		ip = ip.Unmap()
		if (ip.IsLoopback() && !allowLoopback) || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
			ip.IsUnspecified() || ip.IsMulticast() || ip.IsInterfaceLocalMulticast() {
			return errWebhookAddress
		}
		return nil
	}
}

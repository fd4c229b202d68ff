package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"time"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// Webhook bounds: one post gets webhookTimeout; the queue holds
// webhookQueue jobs.
const (
	webhookTimeout = 5 * time.Second
	webhookQueue   = 16
)

// job is one queued delivery; what names it in the log when it is
// dropped.
type job struct {
	what string
	run  func(ctx context.Context, client *http.Client)
}

type webhookPost struct {
	url  string
	body []byte
	// contentType is the body's; headers are added (ntfy's).
	contentType string
	headers     map[string]string
}

// maxNotifiedCommand is how much of a command a notification carries.
const maxNotifiedCommand = 4 << 10

// Command reports one call an agent's policy asks to be told of
// (runtime.Options.Notify): to the log, the chat, ntfy, and to the
// webhooks queued (the parent's body, {"event":"command_notification",
// "session_id", "agent", "command", "success"}, plus tool, tool_type and
// time). A policy that names no delivery logs. It never blocks: it runs
// on the loop goroutine.
func (w *Worker) Command(x runtime.Notification) {
	deliveries := x.Deliveries
	if len(deliveries) == 0 {
		deliveries = []agents.Delivery{{Type: "log"}}
	}
	cmd := x.Command
	if len(cmd) > maxNotifiedCommand {
		cmd = strings.ToValidUTF8(cmd[:maxNotifiedCommand], "") + "…"
	}
	outcome := "succeeded"
	if !x.Success {
		outcome = "failed"
	}
	note := Notification{Agent: x.Agent, SessionID: x.Session, Origin: "policy",
		Title: x.Agent + ": " + x.Type + " " + outcome, Text: x.Agent + " ran (" + outcome + "): " + cmd}
	for _, d := range deliveries {
		switch d.Type {
		case "log":
			w.log.Info("command notification", "session", x.Session, "agent", x.Agent, "tool", x.Tool,
				"tool_type", x.Type, "command", cmd, "success", x.Success)
		case "webhook":
			body, _ := json.Marshal(map[string]any{"event": "command_notification", "session_id": x.Session,
				"agent": x.Agent, "command": cmd, "success": x.Success, "tool": x.Tool, "tool_type": x.Type,
				"time": time.Now().UTC().Format(time.RFC3339)})
			p := webhookPost{url: d.URL, body: body}
			w.enqueue(job{what: hostOf(d.URL), run: func(ctx context.Context, c *http.Client) { w.post(ctx, c, p) }})
		default:
			w.enqueue(job{what: d.Type, run: func(ctx context.Context, c *http.Client) { w.deliver(ctx, c, d, note) }})
		}
	}
}

// enqueue hands j to the worker; a full queue, or a worker that is
// stopping or has stopped, drops it with a log line. It never blocks.
func (w *Worker) enqueue(j job) {
	select {
	case <-w.stop:
		w.log.Warn("notification after shutdown; dropped one", "to", j.what)
		return
	case <-w.done: // its Start context ended
		w.log.Warn("notification after shutdown; dropped one", "to", j.what)
		return
	default:
	}
	select {
	case w.queue <- j:
	default:
		w.log.Warn("notification queue full; dropped one", "to", j.what)
	}
}

func (w *Worker) work(ctx context.Context) {
	defer close(w.done)
	// Its own transport, so that the connections it keeps open go with it,
	// and a dialer that refuses addresses a webhook has no business with.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil // the address checked is the one dialled
	dialer := &net.Dialer{Timeout: webhookTimeout, Control: webhookDialControl(w.allowLoopback)}
	tr.DialContext = dialer.DialContext
	client := &http.Client{Timeout: webhookTimeout, Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	defer client.CloseIdleConnections()
	for {
		select {
		case j := <-w.queue:
			j.run(ctx, client)
		case <-w.stop:
			w.flush(ctx, client)
			return
		case <-ctx.Done():
			w.flush(ctx, client)
			return
		}
	}
}

// flush runs what is queued at shutdown, until ctx ends.
func (w *Worker) flush(ctx context.Context, client *http.Client) {
	for {
		select {
		case j := <-w.queue:
			if ctx.Err() != nil {
				w.log.Warn("notification not sent before shutdown; dropped one", "to", j.what)
				continue
			}
			j.run(ctx, client)
		default:
			return
		}
	}
}

func (w *Worker) post(ctx context.Context, client *http.Client, p webhookPost) {
	ctx, cancel := context.WithTimeout(ctx, webhookTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url, bytes.NewReader(p.body))
	if err == nil {
		ct := p.contentType
		if ct == "" {
			ct = "application/json"
		}
		req.Header.Set("Content-Type", ct)
		for k, v := range p.headers {
			req.Header.Set(k, v)
		}
		var resp *http.Response
		if resp, err = client.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // lets the connection be reused
			resp.Body.Close()
			if resp.StatusCode >= 300 {
				err = fmt.Errorf("the server answered %s", resp.Status)
			}
		}
	}
	if err != nil {
		w.log.Warn("notification post failed", "host", hostOf(p.url), "err", err)
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

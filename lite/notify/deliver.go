package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// Notification is a short notice the agent's side sends on its own: a
// turn nobody watched ended, a background process finished, a heartbeat
// found something worth saying. Worker.Notify delivers it per the
// agent's spec.notify.
type Notification struct {
	// Agent is whose settings apply (spec.notify); required.
	Agent string
	// SessionID, Gateway and ChatID say where it comes from: a chat
	// delivery without a gateway of its own goes to Gateway's ChatID
	// (or, when those are empty, to SessionID's chat, if it has one).
	SessionID string
	Gateway   string
	ChatID    string
	// Title is a one-line summary (ntfy's Title header, the webhook's
	// title); Text the notice itself (at most 4 KiB are sent).
	Title string
	Text  string
	// Origin says what sent it ("process", "heartbeat", "schedule:<id>",
	// ...): ntfy's Tags, the webhook's origin, the log's.
	Origin string
}

// Agents gives the agents' notify settings.
type Agents interface {
	// Spec reads the agent's files (no build); called on the worker.
	Spec(name string) (*agents.Agent, error)
	// CachedAgent is the agent as last built, if it is in the cache;
	// called on the loop goroutine, which must not read files.
	CachedAgent(name string) (*runtime.LoadedAgent, bool)
}

// Bounds of what a notification carries.
const (
	maxNoticeText  = 4 << 10
	maxNoticeTitle = 200
)

// Notify delivers n per its agent's spec.notify (default: the session's
// own chat for a gateway's session, the log otherwise; when: never drops
// it). It never blocks: n is queued for the worker, and a full queue
// drops it with a log line. Chat deliveries are durable and exactly once
// (a notice in the chat's session, delivered by its gateway); webhook
// and ntfy posts are tried once, within 5 s.
func (w *Worker) Notify(n Notification) {
	if n.Agent == "" || strings.TrimSpace(n.Text) == "" {
		w.log.Warn("a notification without an agent or text was dropped", "agent", n.Agent, "origin", n.Origin)
		return
	}
	n = n.bounded()
	w.enqueue(job{what: "notification of " + n.Agent, run: func(ctx context.Context, c *http.Client) {
		set, ok := w.settings(n.Agent)
		if ok && set.When == agents.NotifyNever {
			return
		}
		w.deliverAll(ctx, c, set.Deliveries, n)
	}})
}

// settings returns the agent's spec.notify; ok is false (and the
// settings the defaults) when the agent cannot be loaded.
func (w *Worker) settings(agent string) (agents.NotifySettings, bool) {
	spec, err := w.agents.Spec(agent)
	if err != nil {
		w.log.Warn("notification settings unreadable; using the defaults", "agent", agent, "err", err)
		return agents.NotifySettings{When: agents.NotifyUnwatched}, false
	}
	return spec.Notify, true
}

// bounded cuts the text and title to their bounds; the title is one line.
func (n Notification) bounded() Notification {
	n.Text = cutText(n.Text, maxNoticeText)
	title := strings.Join(strings.Fields(n.Title), " ")
	if title == "" {
		title = "agnx-lite: " + n.Agent
	}
	n.Title = cutText(title, maxNoticeTitle)
	return n
}

// cutText cuts s to at most limit bytes at a rune boundary, with "…".
func cutText(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	return strings.ToValidUTF8(s[:limit-len("…")], "") + "…"
}

// deliverAll sends n to each delivery; none means the default: the chat
// when n has one, the log otherwise. On the worker.
func (w *Worker) deliverAll(ctx context.Context, c *http.Client, ds []agents.Delivery, x Notification) {
	if len(ds) == 0 {
		ds = []agents.Delivery{{Type: "log"}}
		if x.Gateway != "" {
			ds[0].Type = "chat"
		}
	}
	for _, d := range ds {
		if ctx.Err() != nil {
			return
		}
		w.deliver(ctx, c, d, x)
	}
}

// deliver sends x to one delivery. On the worker.
func (w *Worker) deliver(ctx context.Context, c *http.Client, d agents.Delivery, x Notification) {
	x = x.bounded()
	switch d.Type {
	case "chat":
		err := w.chatNotice(ctx, d, x)
		if err == nil {
			return
		}
		if !errors.Is(err, errNoChatToNotify) {
			w.log.Warn("notification to a chat failed", "agent", x.Agent, "gateway", d.Gateway, "err", err)
			return
		}
		w.logNotice(x) // no chat: the log has it
	case "webhook":
		body, _ := json.Marshal(map[string]any{"event": "notification", "agent": x.Agent, "session_id": x.SessionID,
			"gateway": x.Gateway, "chat_id": x.ChatID, "title": x.Title, "text": x.Text, "origin": x.Origin,
			"time": time.Now().UTC().Format(time.RFC3339)})
		w.post(ctx, c, webhookPost{url: d.URL, body: body})
	case "ntfy":
		p, err := w.ntfyPost(d, x)
		if err != nil {
			w.log.Warn("ntfy notification not sent", "agent", x.Agent, "err", err)
			return
		}
		w.post(ctx, c, p)
	default:
		w.logNotice(x)
	}
}

func (w *Worker) logNotice(x Notification) {
	w.log.Info("notification", "agent", x.Agent, "session", x.SessionID, "origin", x.Origin, "title", x.Title, "text", x.Text)
}

// ntfyPost is x as ntfy takes it: the text as the body, the title,
// priority and origin (as a tag) as headers, the token as a bearer token.
func (w *Worker) ntfyPost(d agents.Delivery, x Notification) (webhookPost, error) {
	h := map[string]string{"Title": x.Title}
	if d.Priority != "" {
		h["Priority"] = d.Priority
	}
	if tag := ntfyTag(x.Origin); tag != "" {
		h["Tags"] = tag
	}
	if d.Token != "" {
		tok, err := expandOffered(d.Token, w.secrets)
		if err != nil {
			return webhookPost{}, err
		}
		if tok != "" {
			h["Authorization"] = "Bearer " + tok
		}
	}
	return webhookPost{url: d.URL, body: []byte(x.Text), contentType: "text/plain; charset=utf-8", headers: h}, nil
}

// ntfyTag is the origin's kind ("schedule" of "schedule:01J..."), in the
// letters ntfy's tags take.
func ntfyTag(origin string) string {
	kind, _, _ := strings.Cut(origin, ":")
	kind = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			return r
		}
		return -1
	}, strings.ToLower(kind))
	return cutText(kind, 32)
}

// expandOffered replaces ${NAME} and ${env:NAME} in v with the values
// offered (agnx.yaml's sandbox.env): an agent may not send the daemon's
// other secrets anywhere.
func expandOffered(v string, offered map[string]string) (string, error) {
	var b strings.Builder
	for {
		i := strings.Index(v, "${")
		if i < 0 {
			b.WriteString(v)
			return b.String(), nil
		}
		end := strings.IndexByte(v[i:], '}')
		if end < 0 {
			return "", errors.New(`the token's "${" is not closed by "}"`)
		}
		name := strings.TrimPrefix(v[i+2:i+end], "env:")
		val, ok := offered[name]
		if !ok {
			return "", fmt.Errorf("the token names the variable %s, which sandbox.env in agnx.yaml does not offer: add %s: ${%s} under sandbox.env", name, name, name)
		}
		b.WriteString(v[:i])
		b.WriteString(val)
		v = v[i+end+1:]
	}
}

// hostOf is the host of a URL, for logs: a URL's path and query may hold
// a secret (an ntfy topic, a token).
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(bad URL)"
	}
	return u.Host
}

// offered are the values sandbox.env offers, by name: what an ntfy token
// may name.
func offered(env map[string]config.Secret) map[string]string {
	m := make(map[string]string, len(env))
	for k, v := range env {
		m[k] = v.Value()
	}
	return m
}

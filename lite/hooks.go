package lite

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/chats"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/hooktmpl"
	"github.com/agnx-lite/agnx-lite/lite/httpapi"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/storage"
)

// hooks delivers the inbound webhooks of the config's hooks: section as
// messages (httpapi.Hooks). Each hook has a fixed state made at start: no
// goroutine, no map that callers can grow.
type hooks struct {
	app    *App
	log    *slog.Logger
	now    func() time.Time
	byName map[string]*hookState
	// off are the disabled hooks, named only in the log.
	off map[string]bool
	// maxBody is the largest max_body_kb of the hooks, in bytes: what
	// is read of any body before it is authenticated.
	maxBody int64
	// refusedLog meters the log lines of refused deliveries, which
	// anyone can send; skipped counts the lines it held back.
	refusedLog tokenBucket
	skipped    atomic.Int64
}

// refusedLogPerMinute bounds the log lines of refused deliveries.
const refusedLogPerMinute = 10

// hookState is one hook's config and what serializes and meters it.
type hookState struct {
	name string
	cfg  config.Hook
	// turn is held from the check of the delivery id to the commit of
	// its message, so two identical deliveries at once run once.
	turn chan struct{}
	rate tokenBucket
}

var _ httpapi.Hooks = (*hooks)(nil)

// newHooks readies the config's hooks; a disabled one is logged.
func newHooks(a *App, log *slog.Logger) *hooks {
	h := &hooks{app: a, log: log, now: time.Now, byName: map[string]*hookState{}, off: map[string]bool{},
		maxBody: config.DefaultHookBodyKB << 10, refusedLog: tokenBucket{perMinute: refusedLogPerMinute}}
	for name, c := range a.Config.Hooks {
		switch {
		case c.Disabled():
			log.Warn("webhook disabled: its secret or token is empty", "hook", name)
			h.off[name] = true
			continue
		case c.Parsed == nil:
			log.Error("webhook disabled: its config was not validated", "hook", name)
			h.off[name] = true
			continue
		}
		h.byName[name] = &hookState{name: name, cfg: c, turn: make(chan struct{}, 1),
			rate: tokenBucket{perMinute: c.MaxPerMinute}}
	}
	if len(h.byName) > 0 {
		h.maxBody = 0
		for _, hs := range h.byName {
			h.maxBody = max(h.maxBody, hs.limit())
		}
	}
	return h
}

// limit is the hook's body limit in bytes.
func (hs *hookState) limit() int64 { return int64(hs.cfg.MaxBodyKB) << 10 }

// MaxBody implements httpapi.Hooks: the same for every name, so that a
// large body's answer says nothing of which hooks exist.
func (h *hooks) MaxBody() int64 { return h.maxBody }

func refusal(status int, format string, args ...any) error {
	return &httpapi.HookError{Status: status, Msg: fmt.Sprintf(format, args...)}
}

// Deliver implements httpapi.Hooks: authenticate, meter, parse, render,
// then send once per delivery id.
func (h *hooks) Deliver(ctx context.Context, name string, header http.Header, body []byte) (httpapi.HookReceipt, error) {
	hs := h.byName[name]
	var cfg *config.Hook
	if hs != nil {
		cfg = &hs.cfg
	}
	if why := hookAuth(cfg, header, body); why != "" {
		h.refused(name, why)
		return httpapi.HookReceipt{}, refusal(http.StatusUnauthorized, "%s", httpapi.HookRefused)
	}
	if int64(len(body)) > hs.limit() {
		return httpapi.HookReceipt{}, refusal(http.StatusRequestEntityTooLarge, "%s", httpapi.HookTooLarge(hs.limit()))
	}
	if header.Get("X-GitHub-Event") == "ping" {
		return httpapi.HookReceipt{Status: "ignored"}, nil // GitHub's hello when a hook is made
	}
	if wait := hs.rate.take(h.now()); wait > 0 {
		return httpapi.HookReceipt{}, &httpapi.HookError{Status: http.StatusTooManyRequests, RetryAfter: wait,
			Msg: fmt.Sprintf("this hook takes at most %d deliveries a minute: send it again later", hs.cfg.MaxPerMinute)}
	}
	text, err := hookMessage(&hs.cfg, header, body)
	if err != nil {
		return httpapi.HookReceipt{}, err
	}
	id, problem := deliveryID(&hs.cfg, header)
	if problem != "" {
		return httpapi.HookReceipt{}, refusal(http.StatusBadRequest, "%s", problem)
	}
	return h.send(ctx, hs, delivery{id: id, digest: bodyDigest(&hs.cfg, body)}, text)
}

// refused logs a refused delivery for the owner, who may want to know
// which it was (the caller is told nothing), at most
// refusedLogPerMinute lines a minute: anyone can send them.
func (h *hooks) refused(name, why string) {
	if h.refusedLog.take(h.now()) > 0 {
		h.skipped.Add(1)
		return
	}
	if h.off[name] {
		why = "the hook is disabled (its secret or token is empty)"
	} else if h.byName[name] == nil {
		why = "no such hook in agnx.yaml"
	}
	h.log.Warn("webhook refused", "hook", name, "reason", why, "refusals_not_logged", h.skipped.Swap(0))
}

// hookMessage parses the body and renders the hook's template over it.
func hookMessage(c *config.Hook, header http.Header, body []byte) (string, error) {
	if ct := header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			return "", refusal(http.StatusUnsupportedMediaType, "the body must be JSON sent as application/json (GitHub: Content type application/json)")
		}
	}
	data, err := hooktmpl.ParseBody(body)
	if err != nil {
		return "", refusal(http.StatusBadRequest, "%v", err)
	}
	text, err := c.Parsed.Render(data)
	if err != nil {
		return "", refusal(http.StatusUnprocessableEntity, "%v", err)
	}
	return text, nil
}

// send stores the message in the target session with the delivery's id
// and digest, unless either was seen, holding the hook's turn meanwhile;
// then the target's gateway follows the session.
func (h *hooks) send(ctx context.Context, hs *hookState, d delivery, text string) (httpapi.HookReceipt, error) {
	select {
	case hs.turn <- struct{}{}:
	case <-ctx.Done():
		return httpapi.HookReceipt{}, &httpapi.HookError{Status: http.StatusServiceUnavailable, RetryAfter: 5 * time.Second,
			Msg: "deliveries to this hook are queued too long: send it again later"}
	}
	release := func() { <-hs.turn }
	now := h.now()
	var seen *seenRecord
	var expired [][]byte
	err := h.app.Loop.View(func(tx *storage.Tx) (err error) {
		seen, expired, err = seenBefore(tx, hs.name, d, now)
		return err
	})
	if err != nil {
		release()
		return httpapi.HookReceipt{}, fmt.Errorf("read the deliveries of hook %s: %w", hs.name, err)
	}
	if seen != nil {
		release()
		h.log.Info("webhook delivery seen before: nothing stored", "hook", hs.name, "delivery", d.id, "session_id", seen.Session)
		return httpapi.HookReceipt{Status: "duplicate", SessionID: seen.Session}, nil
	}
	tg, err := h.target(ctx, hs)
	if err == nil {
		_, err = h.app.Loop.Send(ctx, tg.sid, runtime.Input{Content: text, Origin: runtime.OriginWebhook(hs.name),
			Commit: rememberSeen(hs.name, d, tg.sid, now, expired)})
	}
	release()
	if err != nil {
		return httpapi.HookReceipt{}, sendRefusal(hs, err)
	}
	h.log.Info("webhook accepted", "hook", hs.name, "session_id", tg.sid, "delivery", d.id)
	if tg.gateway != "" && tg.gateway != hookGateway {
		if err := h.app.Follow(ctx, tg.gateway, tg.sid, tg.chat); err != nil {
			h.log.Warn("webhook: the chat does not follow its session", "hook", hs.name, "gateway", tg.gateway, "err", err)
		}
	}
	return httpapi.HookReceipt{Status: "accepted", SessionID: tg.sid}, nil
}

// sendRefusal answers the loop's refusals as the caller can act on them.
func sendRefusal(hs *hookState, err error) error {
	switch {
	case errors.Is(err, runtime.ErrBusy), errors.Is(err, runtime.ErrClosed):
		return &httpapi.HookError{Status: http.StatusServiceUnavailable, Msg: err.Error(), RetryAfter: 5 * time.Second}
	case errors.Is(err, runtime.ErrSessionNotFound), errors.Is(err, runtime.ErrSessionEnded):
		return refusal(http.StatusConflict, "hooks.%s.target.session is gone or has ended: point the hook at another session in agnx.yaml", hs.name)
	case errors.Is(err, storage.ErrDiskFull):
		return refusal(http.StatusInsufficientStorage, "the disk is full: nothing was stored, free space and send it again")
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return &httpapi.HookError{Status: http.StatusServiceUnavailable, Msg: "the delivery was not stored in time: send it again", RetryAfter: 5 * time.Second}
	}
	var invalid *agents.Error
	if errors.As(err, &invalid) || errors.Is(err, runtime.ErrAgentNotFound) {
		return refusal(http.StatusServiceUnavailable, "hooks.%s.agent cannot run: %v", hs.name, err)
	}
	return fmt.Errorf("deliver to hook %s: %w", hs.name, err)
}

// hookGateway is the gateway of the sessions hooks start for themselves:
// no gateway delivers them; API clients read them.
const hookGateway = "webhook"

// hookTarget is the session a delivery goes to and the chat that follows it.
type hookTarget struct{ sid, gateway, chat string }

// target finds the hook's session, starting one when the chat (or the
// hook) has none or its session has ended. It runs under the hook's turn.
func (h *hooks) target(ctx context.Context, hs *hookState) (hookTarget, error) {
	t := hs.cfg.Target
	switch {
	case t.Session != "":
		info, err := h.app.Loop.Session(ctx, t.Session)
		if err != nil {
			return hookTarget{}, err
		}
		return hookTarget{sid: info.ID, gateway: info.Gateway, chat: info.ChatID}, nil
	case t.Gateway != "":
		cs := h.app.Chats()
		sid, _, err := cs.Current(t.Gateway, t.ChatID)
		if err != nil && !errors.Is(err, chats.ErrNoChat) {
			return hookTarget{}, err
		}
		if err != nil || !h.usable(ctx, sid) {
			in := agents.Inbound{Gateway: t.Gateway, ChatID: t.ChatID}
			if sid, err = cs.NewSession(ctx, in, hs.cfg.Agent); err != nil {
				return hookTarget{}, err
			}
		}
		return hookTarget{sid: sid, gateway: t.Gateway, chat: t.ChatID}, nil
	}
	key := "hook/" + hs.name + "/session"
	data, err := h.app.Loop.KV(ctx, key)
	if err != nil {
		return hookTarget{}, err
	}
	sid := string(data)
	if !h.usable(ctx, sid) {
		info, err := h.app.Loop.CreateSession(ctx, runtime.NewSession{Agent: hs.cfg.Agent, Gateway: hookGateway, ChatID: hs.name,
			Principal: agents.WebhookPrincipal(hs.name)})
		if err != nil {
			return hookTarget{}, err
		}
		sid = info.ID
		if err := h.app.Loop.PutKV(ctx, key, []byte(sid)); err != nil {
			return hookTarget{}, fmt.Errorf("remember the session of hook %s: %w", hs.name, err)
		}
	}
	return hookTarget{sid: sid, gateway: hookGateway, chat: hs.name}, nil
}

// usable reports whether the session exists and takes messages.
func (h *hooks) usable(ctx context.Context, sid string) bool {
	if sid == "" {
		return false
	}
	info, err := h.app.Loop.Session(ctx, sid)
	return err == nil && info.Status != runtime.SessionCompleted
}

// tokenBucket meters a hook: perMinute deliveries a minute, in bursts of
// at most perMinute.
type tokenBucket struct {
	mu        sync.Mutex
	perMinute int
	tokens    float64
	last      time.Time
}

// take spends a token and returns 0, or returns how long until one is
// there.
func (b *tokenBucket) take(now time.Time) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	rate := float64(b.perMinute) / float64(time.Minute) // tokens per ns
	if b.last.IsZero() {
		b.tokens = float64(b.perMinute)
	} else if d := now.Sub(b.last); d > 0 {
		b.tokens = min(float64(b.perMinute), b.tokens+float64(d)*rate)
	}
	b.last = now
	if b.tokens >= 1 {
		b.tokens--
		return 0
	}
	return max(time.Duration((1-b.tokens)/rate).Round(time.Millisecond), time.Millisecond)
}

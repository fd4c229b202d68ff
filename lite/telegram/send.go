package telegram

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"
)

// maxAttempts bounds the retries of one call: 429s after retry_after, and
// network errors (only those after which the message surely was not sent,
// for sendMessage; any, for idempotent edits and chat actions).
const maxAttempts = 8

// bot makes the Bot API calls the poller, the watchers and Deliver share:
// retries, the plain-text fallback, and a log that does not flood. It is
// safe for concurrent use.
type bot struct {
	o   *Options
	api *Client
	log *slog.Logger

	mu      sync.Mutex
	lastLog map[string]time.Time // guarded by mu
}

func newBot(o *Options) *bot {
	return &bot{o: o, api: NewClient(o.BaseURL, o.Token, o.HTTPClient), log: o.Logger.With("gateway", GatewayName),
		lastLog: map[string]time.Time{}}
}

// callCtx gives a Bot API call its deadline.
func (b *bot) callCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, b.o.CallTimeout)
}

// maxLogKeys bounds the rate limiter's memory.
const maxLogKeys = 1024

// logLimited logs at most once a minute per key: errors that repeat in a
// loop (the network is down) must not flood the journal.
func (b *bot) logLimited(key string, level slog.Level, msg string, args ...any) {
	b.mu.Lock()
	now := time.Now()
	if now.Sub(b.lastLog[key]) < time.Minute {
		b.mu.Unlock()
		return
	}
	if len(b.lastLog) >= maxLogKeys {
		for k, t := range b.lastLog {
			if now.Sub(t) >= time.Minute {
				delete(b.lastLog, k)
			}
		}
	}
	b.lastLog[key] = now
	b.mu.Unlock()
	b.log.Log(context.Background(), level, msg, args...)
}

// say sends a short plain-text notice, best effort.
func (b *bot) say(ctx context.Context, chat int64, text string) {
	if text == "" {
		return
	}
	if _, err := b.post(ctx, Text{ChatID: chat, Text: text}, text); err != nil {
		b.logLimited("say", slog.LevelWarn, "telegram: cannot send a message", "chat_id", chat, "err", err)
	}
}

// post sends a message. HTML that Telegram cannot parse is sent again as
// plain (the same text, unrendered): a reply never fails on entities.
func (b *bot) post(ctx context.Context, t Text, plain string) (Message, error) {
	for attempt := 1; ; attempt++ {
		cctx, cancel := b.callCtx(ctx)
		m, err := b.api.SendMessage(cctx, t)
		cancel()
		if err == nil {
			return m, nil
		}
		if t.ParseMode != "" && badEntities(err) {
			b.log.Warn("telegram refused the formatting; sending plain text", "chat_id", t.ChatID, "err", err)
			t.ParseMode, t.Text = "", plain
			continue
		}
		if !b.retry(ctx, err, attempt, notSent(err)) {
			return m, err
		}
	}
}

// edit replaces a message's text; editing to the same text is no error.
func (b *bot) edit(ctx context.Context, t Text, plain string) error {
	for attempt := 1; ; attempt++ {
		cctx, cancel := b.callCtx(ctx)
		err := b.api.EditMessageText(cctx, t)
		cancel()
		if err == nil || notModified(err) {
			return nil
		}
		if t.ParseMode != "" && badEntities(err) {
			b.log.Warn("telegram refused the formatting; editing with plain text", "chat_id", t.ChatID, "err", err)
			t.ParseMode, t.Text = "", plain
			continue
		}
		var ae *APIError
		if !b.retry(ctx, err, attempt, !errors.As(err, &ae)) {
			return err
		}
	}
}

// retry waits before another attempt and reports whether to make it: a
// 429 waits retry_after; a network error the caller calls safe to retry
// waits a jittered backoff; anything else, or too many attempts, gives up.
func (b *bot) retry(ctx context.Context, err error, attempt int, safe bool) bool {
	if attempt >= maxAttempts || ctx.Err() != nil {
		return false
	}
	var ae *APIError
	var wait time.Duration
	switch {
	case errors.As(err, &ae) && ae.Code == 429:
		wait = max(ae.RetryAfter, time.Second)
	case errors.As(err, &ae):
		return false
	case safe:
		wait = jitter(attempt)
	default:
		return false
	}
	return b.o.Sleep(ctx, wait) == nil
}

// typing shows "typing…" in the chat, best effort.
func (b *bot) typing(ctx context.Context, chat int64) {
	cctx, cancel := b.callCtx(ctx)
	defer cancel()
	if err := b.api.SendChatAction(cctx, chat, "typing"); err != nil && ctx.Err() == nil {
		b.logLimited("typing", slog.LevelDebug, "telegram: cannot show typing", "chat_id", chat, "err", err)
	}
}

package telegram

import (
	"context"
	"errors"
	"log/slog"
	"time"
)

// maxAttempts bounds the retries of one call: 429s after retry_after, and
// network errors (only those after which the message surely was not sent,
// for sendMessage; any, for idempotent edits and chat actions).
const maxAttempts = 8

// say sends a short plain-text notice, best effort.
func (g *Gateway) say(ctx context.Context, chat int64, text string) {
	if text == "" {
		return
	}
	if _, err := g.post(ctx, Text{ChatID: chat, Text: text}, text); err != nil {
		g.logLimited("say", slog.LevelWarn, "telegram: cannot send a message", "chat_id", chat, "err", err)
	}
}

// post sends a message. HTML that Telegram cannot parse is sent again as
// plain (the same text, unrendered): a reply never fails on entities.
func (g *Gateway) post(ctx context.Context, t Text, plain string) (Message, error) {
	for attempt := 1; ; attempt++ {
		cctx, cancel := g.callCtx(ctx)
		m, err := g.api.SendMessage(cctx, t)
		cancel()
		if err == nil {
			return m, nil
		}
		if t.ParseMode != "" && badEntities(err) {
			g.log.Warn("telegram refused the formatting; sending plain text", "chat_id", t.ChatID, "err", err)
			t.ParseMode, t.Text = "", plain
			continue
		}
		if !g.retry(ctx, err, attempt, notSent(err)) {
			return m, err
		}
	}
}

// edit replaces a message's text; editing to the same text is no error.
func (g *Gateway) edit(ctx context.Context, t Text, plain string) error {
	for attempt := 1; ; attempt++ {
		cctx, cancel := g.callCtx(ctx)
		err := g.api.EditMessageText(cctx, t)
		cancel()
		if err == nil || notModified(err) {
			return nil
		}
		if t.ParseMode != "" && badEntities(err) {
			g.log.Warn("telegram refused the formatting; editing with plain text", "chat_id", t.ChatID, "err", err)
			t.ParseMode, t.Text = "", plain
			continue
		}
		var ae *APIError
		if !g.retry(ctx, err, attempt, !errors.As(err, &ae)) {
			return err
		}
	}
}

// retry waits before another attempt and reports whether to make it: a
// 429 waits retry_after; a network error the caller calls safe to retry
// waits a jittered backoff; anything else, or too many attempts, gives up.
func (g *Gateway) retry(ctx context.Context, err error, attempt int, safe bool) bool {
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
	return g.o.Sleep(ctx, wait) == nil
}

// typing shows "typing…" in the chat, best effort.
func (g *Gateway) typing(ctx context.Context, chat int64) {
	cctx, cancel := g.callCtx(ctx)
	defer cancel()
	if err := g.api.SendChatAction(cctx, chat, "typing"); err != nil && ctx.Err() == nil {
		g.logLimited("typing", slog.LevelDebug, "telegram: cannot show typing", "chat_id", chat, "err", err)
	}
}

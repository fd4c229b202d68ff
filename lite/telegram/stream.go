package telegram

import (
	"context"
	"log/slog"
	"time"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// The streamed reply: tokens go into one message, sent with the first of
// them and edited at most once per EditInterval; the durable answer gives
// that message its final text (and, when long, the messages after it).

func (w *watcher) editC() <-chan time.Time {
	if w.edit == nil {
		return nil
	}
	return w.edit.C
}

func (w *watcher) stopEdit() {
	if w.edit != nil {
		w.edit.Stop()
		w.edit = nil
	}
}

// schedulePreview shows the text streamed so far now, or once the edit
// interval has passed since the last edit.
func (w *watcher) schedulePreview(ctx context.Context) {
	if w.edit != nil {
		return
	}
	if wait := w.o.o.EditInterval - time.Since(w.lastEdit); wait > 0 {
		w.edit = time.NewTimer(wait)
		return
	}
	w.flushPreview(ctx)
}

// flushPreview sends or edits the preview message with the first piece of
// the text streamed so far.
func (w *watcher) flushPreview(ctx context.Context) {
	parts := Split(w.text.String(), MaxMessage)
	if len(parts) == 0 || w.noPrev {
		return
	}
	first := parts[0]
	w.lastEdit = time.Now()
	if w.rec.Preview != 0 {
		if err := w.bot.edit(ctx, Text{ChatID: w.chat, MessageID: w.rec.Preview, Text: HTML(first), ParseMode: "HTML"}, first); err != nil {
			w.bot.logLimited("preview", slog.LevelDebug, "telegram: cannot update the streamed reply", "chat_id", w.chat, "err", err)
		}
		return
	}
	m, err := w.bot.post(ctx, Text{ChatID: w.chat, Text: HTML(first), ParseMode: "HTML"}, first)
	if err != nil {
		w.noPrev = true // the answer goes in a message of its own
		w.bot.logLimited("preview", slog.LevelDebug, "telegram: cannot start the streamed reply", "chat_id", w.chat, "err", err)
		return
	}
	w.rec.Preview = m.MessageID
	w.dirty = true // the next mark or the watcher's end writes it
}

// newRound forgets the streamed text: a model call ended.
func (w *watcher) newRound() {
	w.text.Reset()
	w.stopEdit()
	w.noPrev = false
	w.lastEdit = time.Time{}
}

// answer delivers an assistant response: the first piece into the preview
// message (or a new one), the others as messages after it.
func (w *watcher) answer(ctx context.Context, e runtime.Event) {
	w.stopEdit()
	parts := Split(e.Content, MaxMessage)
	w.deliver(ctx, e.Seq, func() error {
		for i, p := range parts {
			if i == 0 && w.rec.Preview != 0 {
				err := w.bot.edit(ctx, Text{ChatID: w.chat, MessageID: w.rec.Preview, Text: HTML(p), ParseMode: "HTML"}, p)
				if err == nil {
					continue
				}
				if _, ok := err.(*APIError); !ok {
					return err
				}
				// The preview is gone (deleted by the user): send anew.
			}
			if _, err := w.bot.post(ctx, Text{ChatID: w.chat, Text: HTML(p), ParseMode: "HTML"}, p); err != nil {
				if i > 0 {
					return &partialError{err}
				}
				return err
			}
		}
		return nil
	})
}

// notice delivers an assistant response with an origin (Loop.Notice) as
// messages of their own: the preview of a turn being streamed stays, to
// take that turn's answer.
func (w *watcher) notice(ctx context.Context, e runtime.Event) {
	preview := w.rec.Preview
	parts := Split(e.Content, MaxMessage)
	w.deliver(ctx, e.Seq, func() error {
		for i, p := range parts {
			if _, err := w.bot.post(ctx, Text{ChatID: w.chat, Text: HTML(p), ParseMode: "HTML"}, p); err != nil {
				if i > 0 {
					return &partialError{err}
				}
				return err
			}
		}
		return nil
	})
	w.rec.Preview = preview
}

// partialError is a send that failed after part of the answer went out:
// it is never unmarked for a resend.
type partialError struct{ err error }

func (e *partialError) Error() string { return e.err.Error() }

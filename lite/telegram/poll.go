package telegram

import (
	"context"
	"errors"
	"github.com/agnx-lite/agnx-lite/lite/inbox"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// offsetKey is the kv entry holding the next update_id to fetch. It moves
// in the same transaction as the user_message an update produced.
const offsetKey = "telegram/offset"

// Backoff bounds after a failed poll.
const (
	backoffMin = time.Second
	backoffMax = time.Minute
)

// poller is the gateway's poll goroutine: it fetches updates and handles
// them one at a time, in order (commands included), handing each message's
// session to the outbox. Its fields are its goroutine's own, but for
// lastPoll.
type poller struct {
	o    *Options
	bot  *bot
	out  *outbox
	cmds commands

	lastPoll atomic.Int64 // unix nanoseconds of the last answered poll

	me      User
	offset  int64
	refused map[int64]time.Time // last refusal per user

	// queue holds the messages that arrive while their chat's turn runs;
	// its timers hand them on with base (the poll context).
	queue *inbox.Inbox
	base  context.Context
}

func newPoller(o *Options, b *bot, out *outbox) *poller {
	g := &poller{o: o, bot: b, out: out, cmds: commands{o: o}, refused: map[int64]time.Time{}, base: context.Background()}
	g.queue = inbox.New(inbox.Options{Busy: g.busy, Deliver: g.deliverQueued})
	out.turnEnded = func(chat int64) { g.queue.Kick(queueKey(chat)) }
	out.waiting = func(chat int64) int { return g.queue.Waiting(queueKey(chat)) }
	return g
}

func (g *poller) lastPollTime() time.Time {
	if n := g.lastPoll.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

// run polls until ctx ends, backing off after failures.
func (g *poller) run(ctx context.Context) {
	g.offset = g.readOffset()
	fails := 0
	for ctx.Err() == nil {
		err := g.pollOnce(ctx)
		if err == nil {
			fails = 0
			continue
		}
		if ctx.Err() != nil {
			return
		}
		fails++
		_ = g.o.Sleep(ctx, g.failed(err, fails))
	}
}

func (g *poller) readOffset() int64 {
	data, err := g.o.Chats.KV(offsetKey)
	if err != nil {
		g.bot.log.Error("cannot read the update offset; starting from Telegram's", "err", err)
		return 0
	}
	n, _ := strconv.ParseInt(string(data), 10, 64)
	return n
}

// pollOnce fetches one batch of updates and handles them in order.
func (g *poller) pollOnce(poll context.Context) error {
	if g.me.ID == 0 {
		ctx, cancel := g.bot.callCtx(poll)
		me, err := g.bot.api.GetMe(ctx)
		cancel()
		if err != nil {
			return err
		}
		g.me = me
		g.bot.log.Info("telegram bot connected", "bot", "@"+me.Username, "bot_id", me.ID)
	}
	// The watchdog: a poll that outlives the server's timeout by the grace
	// period hangs (a dead connection nobody reset) and is abandoned.
	ctx, cancel := context.WithTimeout(poll, g.o.PollTimeout+g.o.PollGrace)
	ups, err := g.bot.api.GetUpdates(ctx, g.offset, g.o.PollTimeout)
	hung := ctx.Err() == context.DeadlineExceeded && poll.Err() == nil
	cancel()
	if hung {
		return errPollHung
	}
	if err != nil {
		return err
	}
	g.lastPoll.Store(time.Now().UnixNano())
	for _, u := range ups {
		if u.UpdateID < g.offset {
			continue // confirmed already
		}
		if err := g.handle(poll, u); err != nil {
			return err // not handled: fetched again after the backoff
		}
	}
	return nil
}

var errPollHung = errors.New("telegram: getUpdates did not answer in time")

// failed logs a poll failure (each kind at most once a minute) and
// returns how long to wait before the next poll.
func (g *poller) failed(err error, fails int) time.Duration {
	var ae *APIError
	switch {
	case errors.Is(err, errPollHung):
		g.bot.logLimited("hung", slog.LevelWarn, "telegram poll hung past its deadline; restarting it", "deadline", g.o.PollTimeout+g.o.PollGrace)
		return backoffMin
	case errors.As(err, &ae) && ae.Code == 429:
		g.bot.logLimited("429", slog.LevelWarn, "telegram asks to slow down", "retry_after", ae.RetryAfter)
		return max(ae.RetryAfter, backoffMin)
	case errors.As(err, &ae) && ae.Code == 409:
		g.bot.logLimited("409", slog.LevelError, "another program is polling this bot with the same token (409 Conflict): "+
			"stop the other instance or remove its webhook; retrying", "err", err)
	case errors.As(err, &ae) && (ae.Code == 401 || ae.Code == 404):
		g.bot.logLimited("401", slog.LevelError, "Telegram refuses the bot token: check gateways.telegram.bot_token (from @BotFather); retrying", "err", err)
	case errors.Is(err, runtime.ErrBusy):
		g.bot.logLimited("busy", slog.LevelWarn, "the runtime sheds load (memory); messages wait in Telegram", "err", err)
	default:
		g.bot.logLimited("net", slog.LevelWarn, "cannot reach Telegram; retrying with backoff", "err", err)
	}
	return jitter(fails)
}

// jitter is capped exponential backoff with full jitter: a random wait
// between half and all of min·2^(fails-1), capped.
func jitter(fails int) time.Duration {
	d := backoffMax
	if fails < 7 {
		d = min(backoffMin<<(fails-1), backoffMax)
	}
	return d/2 + rand.N(d/2+1)
}

// commitOffset moves the offset past an update that produced no message.
func (g *poller) commitOffset(next int64) error {
	if next <= g.offset {
		return nil
	}
	if err := g.o.Chats.PutKV(offsetKey, []byte(strconv.FormatInt(next, 10))); err != nil {
		return err
	}
	g.offset = next
	return nil
}

// cursor is the offset to commit with an update's user_message.
func cursor(u Update) *runtime.Cursor {
	return &runtime.Cursor{Key: offsetKey, Value: []byte(strconv.FormatInt(u.UpdateID+1, 10))}
}

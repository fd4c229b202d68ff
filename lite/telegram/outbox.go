package telegram

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// outRecord is a session's outbox position, kept in kv under outKey.
// Delivered is the last seq handled; Delivering, when set, is a seq whose
// send began and may have reached the chat (it is never sent again);
// Preview is the message a reply is being streamed into.
type outRecord struct {
	Chat       int64  `json:"chat"`
	Delivered  uint64 `json:"delivered"`
	Delivering uint64 `json:"delivering,omitempty"`
	Preview    int64  `json:"preview,omitempty"`
}

func outKey(sid string) string { return "telegram/out/" + sid }

// record reads a session's outbox record. A session without one (its
// first message from Telegram is on its way) starts at its current end:
// what was said before is not this chat's to receive.
func (g *Gateway) record(sid string, chat int64) (outRecord, error) {
	data, err := g.o.Chats.KV(outKey(sid))
	if err != nil {
		return outRecord{}, err
	}
	var r outRecord
	if data != nil && json.Unmarshal(data, &r) == nil && r.Chat != 0 {
		return r, nil
	}
	info, err := runtime.ReadSession(g.o.Store, sid)
	if err != nil {
		return outRecord{}, err
	}
	r = outRecord{Chat: chat, Delivered: info.LastSeq}
	return r, g.putRecord(sid, r)
}

func (g *Gateway) putRecord(sid string, r outRecord) error {
	data, _ := json.Marshal(r)
	if err := g.o.Chats.PutKV(outKey(sid), data); err != nil {
		return fmt.Errorf("telegram outbox of session %s: %w", sid, err)
	}
	return nil
}

// recover starts a watcher for each Telegram session with something to
// deliver or a turn running (resumed after a restart); each delivers what
// the outbox still owes, follows its turn if one runs, then ends.
func (g *Gateway) recover(ctx context.Context) {
	list, err := runtime.ListSessions(g.o.Store)
	if err != nil {
		g.log.Error("telegram: cannot list sessions to deliver pending replies", "err", err)
		return
	}
	for _, s := range list {
		if s.Gateway != GatewayName || s.Status == "ended" {
			continue
		}
		data, err := g.o.Chats.KV(outKey(s.ID))
		if err != nil || data == nil {
			continue // never written to from Telegram
		}
		var r outRecord
		if json.Unmarshal(data, &r) != nil || r.Chat == 0 || (r.Delivered >= s.LastSeq && s.Status != "running") {
			continue
		}
		if err := g.watch(ctx, s.ID, r.Chat); err != nil {
			g.log.Error("telegram: cannot deliver pending replies", "session", s.ID, "err", err)
		}
	}
}

// watchAndSend commits a user message, making sure a watcher follows the
// session from before the message on. Under g.mu, so a watcher deciding
// to end (its turn over, no other queued) cannot miss this message.
func (g *Gateway) watchAndSend(poll, all context.Context, chat int64, sid string, in runtime.Input) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.watchers[sid] == nil {
		if err := g.startWatcher(all, sid, chat); err != nil {
			return err
		}
	}
	_, err := g.o.Loop.Send(poll, sid, in)
	return err
}

// watch starts a watcher for sid unless one runs.
func (g *Gateway) watch(ctx context.Context, sid string, chat int64) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.watchers[sid] != nil {
		return nil
	}
	return g.startWatcher(ctx, sid, chat)
}

// startWatcher subscribes to sid and starts its watcher. g.mu is held.
func (g *Gateway) startWatcher(ctx context.Context, sid string, chat int64) error {
	rec, err := g.record(sid, chat)
	if err != nil {
		return err
	}
	w := &watcher{g: g, sid: sid, chat: rec.Chat, rec: rec, pos: rec.Delivered}
	if err := w.subscribe(ctx); err != nil {
		return err
	}
	g.watchers[sid] = w
	g.wg.Add(1)
	go w.run(ctx)
	return nil
}

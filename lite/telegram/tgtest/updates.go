package tgtest

import (
	"encoding/json"
	"net/http"
	"time"
)

// Queue adds an update (its update_id is set here) and returns its id. A
// waiting getUpdates answers at once.
func (s *Server) Queue(update map[string]any) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextUpd++
	update["update_id"] = s.nextUpd
	raw, err := json.Marshal(update)
	if err != nil {
		panic("tgtest: " + err.Error())
	}
	s.queue = append(s.queue, queued{id: s.nextUpd, raw: raw})
	s.notify()
	return s.nextUpd
}

// QueueRaw adds an update given as JSON text, as is.
func (s *Server) QueueRaw(id int64, raw string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, queued{id: id, raw: json.RawMessage(raw)})
	s.notify()
}

// Pending is how many updates Telegram still holds (not confirmed by an
// offset past them).
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

var date int64 = 1767225600 // 2026-01-01

// User is a Telegram user object.
func User(id int64, name string) map[string]any {
	return map[string]any{"id": id, "is_bot": false, "first_name": name, "username": name + "_tg", "language_code": "en"}
}

// Private is a text message from user id in their private chat with the bot.
func Private(from int64, text string) map[string]any {
	return map[string]any{"message": map[string]any{
		"message_id": time.Now().UnixNano() % 1e6, "date": date, "text": text,
		"from": User(from, "user"),
		"chat": map[string]any{"id": from, "type": "private", "first_name": "user"},
	}}
}

// Group is a text message from user from in group chat.
func Group(chat, from int64, text string) map[string]any {
	return map[string]any{"message": map[string]any{
		"message_id": time.Now().UnixNano() % 1e6, "date": date, "text": text,
		"from": User(from, "user"),
		"chat": map[string]any{"id": chat, "type": "supergroup", "title": "The group"},
	}}
}

// Mention adds the entity a Telegram client adds for @username at the
// start of a message's text.
func Mention(update map[string]any, username string) map[string]any {
	m := update["message"].(map[string]any)
	m["entities"] = []any{map[string]any{"type": "mention", "offset": 0, "length": len([]rune(username)) + 1}}
	return update
}

// Msg returns the message object of an update built by Private or Group,
// to add fields (photo, document, voice, caption, reply_to_message).
func Msg(update map[string]any) map[string]any { return update["message"].(map[string]any) }

// Press is a callback query: user from pressed a button carrying data
// under the bot's message m.
func Press(from int64, m *Message, data string) map[string]any {
	return map[string]any{"callback_query": map[string]any{
		"id": "cq" + time.Now().Format("150405.000000000"), "from": User(from, "user"), "chat_instance": "42",
		"data": data,
		"message": map[string]any{"message_id": m.ID, "date": date, "text": m.Plain(),
			"from": map[string]any{"id": BotID, "is_bot": true, "first_name": "Agnx", "username": BotUsername},
			"chat": map[string]any{"id": m.Chat, "type": "private"}},
	}}
}

// Answered returns the text a callback query was answered with.
func (s *Server) Answered(id string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.answered[id]
	return t, ok
}

func (s *Server) getUpdates(w http.ResponseWriter, r *http.Request, c Call) {
	offset, timeout := c.Int("offset"), time.Duration(c.Int("timeout"))*time.Second
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		if offset > 0 {
			kept := s.queue[:0]
			for _, q := range s.queue {
				if q.id >= offset {
					kept = append(kept, q)
				}
			}
			s.queue = kept
		}
		out := make([]json.RawMessage, 0, len(s.queue))
		for _, q := range s.queue {
			out = append(out, q.raw)
		}
		ch := s.changed
		s.mu.Unlock()
		if len(out) > 0 {
			writeOK(w, out)
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			writeOK(w, out)
			return
		case <-r.Context().Done():
			return
		case <-s.closing:
			return
		}
	}
}

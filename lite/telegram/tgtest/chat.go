package tgtest

import (
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Message is a message the bot sent, as the chat shows it now.
type Message struct {
	ID        int64
	Chat      int64
	Text      string // as sent (HTML when ParseMode is "HTML")
	ParseMode string
	Keyboard  []string // callback_data of its buttons, nil: none
	Edits     int
}

// Plain is the text the user sees.
func (m Message) Plain() string {
	if m.ParseMode == "HTML" {
		return PlainHTML(m.Text)
	}
	return m.Text
}

// Chat returns copies of the messages the bot sent to chat, in order.
func (s *Server) Chat(chat int64) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Message, 0, len(s.chats[chat]))
	for _, m := range s.chats[chat] {
		out = append(out, *m)
	}
	return out
}

// Texts returns what the user sees of each message of chat.
func (s *Server) Texts(chat int64) []string {
	var out []string
	for _, m := range s.Chat(chat) {
		out = append(out, m.Plain())
	}
	return out
}

// check refuses text Telegram would refuse.
func check(text, mode string) error {
	if strings.ToUpper(mode) == "HTML" {
		if err := ValidateHTML(text); err != nil {
			return fmt.Errorf("Bad Request: can't parse entities: %v", err)
		}
		text = PlainHTML(text)
	}
	switch n := utf16Len(text); {
	case strings.TrimSpace(text) == "":
		return fmt.Errorf("Bad Request: message text is empty")
	case n > 4096:
		return fmt.Errorf("Bad Request: message is too long")
	}
	return nil
}

func keyboard(c Call) []string {
	rm, ok := c.Params["reply_markup"].(map[string]any)
	if !ok {
		return nil
	}
	var data []string
	rows, _ := rm["inline_keyboard"].([]any)
	for _, r := range rows {
		btns, _ := r.([]any)
		for _, b := range btns {
			bm, _ := b.(map[string]any)
			d, _ := bm["callback_data"].(string)
			data = append(data, d)
		}
	}
	return data
}

func (s *Server) sendMessage(w http.ResponseWriter, c Call) {
	text, mode := c.Str("text"), c.Str("parse_mode")
	if err := check(text, mode); err != nil {
		writeErr(w, Fault{Code: 400, Description: err.Error()})
		return
	}
	s.mu.Lock()
	m := &Message{ID: s.nextMsg, Chat: c.Int("chat_id"), Text: text, ParseMode: mode, Keyboard: keyboard(c)}
	s.nextMsg++
	s.chats[m.Chat] = append(s.chats[m.Chat], m)
	s.byID[m.ID] = m
	s.notify()
	answer := messageJSON(m) // under the lock: an edit may come before the answer is written
	s.mu.Unlock()
	writeOK(w, answer)
}

func (s *Server) editMessage(w http.ResponseWriter, c Call) {
	text, mode := c.Str("text"), c.Str("parse_mode")
	if err := check(text, mode); err != nil {
		writeErr(w, Fault{Code: 400, Description: err.Error()})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.byID[c.Int("message_id")]
	if m == nil || m.Chat != c.Int("chat_id") {
		writeErr(w, Fault{Code: 400, Description: "Bad Request: message to edit not found"})
		return
	}
	kb := keyboard(c)
	if m.Text == text && m.ParseMode == mode && strings.Join(m.Keyboard, ",") == strings.Join(kb, ",") {
		writeErr(w, Fault{Code: 400, Description: "Bad Request: message is not modified: specified new message content " +
			"and reply markup are exactly the same as a current content and reply markup of the message"})
		return
	}
	m.Text, m.ParseMode, m.Keyboard = text, mode, kb
	m.Edits++
	s.notify()
	writeOK(w, messageJSON(m))
}

// messageJSON is m as the Bot API answers it; the caller holds s.mu.
func messageJSON(m *Message) map[string]any {
	return map[string]any{"message_id": m.ID, "date": time.Now().Unix(), "text": m.Plain(),
		"from": map[string]any{"id": BotID, "is_bot": true, "first_name": "Agnx", "username": BotUsername},
		"chat": map[string]any{"id": m.Chat, "type": "private"}}
}

func (s *Server) getFile(w http.ResponseWriter, c Call) {
	s.mu.Lock()
	f, ok := s.files[c.Str("file_id")]
	s.mu.Unlock()
	if !ok {
		writeErr(w, Fault{Code: 400, Description: "Bad Request: invalid file_id"})
		return
	}
	writeOK(w, map[string]any{"file_id": c.Str("file_id"), "file_unique_id": "u" + c.Str("file_id"),
		"file_size": len(f.data), "file_path": f.path})
}

func (s *Server) download(w http.ResponseWriter, path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.files {
		if f.path == path {
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Write(f.data)
			return
		}
	}
	http.NotFound(w, nil)
}

package plugin

import (
	"encoding/json"
	"fmt"

	"github.com/agnx-lite/agnx-lite/runtime/jsonw"
)

// Version is the protocol version agnx-lite speaks. A plugin's ready must
// name the same major version (v1alpha1, v1, 1.2.0: major 1).
const Version = "v1alpha1"

// Capabilities a plugin may list in its ready.
const (
	CapMedia          = "media"
	CapEdit           = "edit"
	CapDelete         = "delete"
	CapTyping         = "typing"
	CapReply          = "reply"
	CapInlineKeyboard = "inline_keyboard"
)

// Error codes of command_error and error.
const (
	CodeChatNotFound    = "chat_not_found"
	CodeMessageNotFound = "message_not_found"
	CodeRateLimited     = "rate_limited"
	CodeUnauthorized    = "unauthorized"
	CodePlatformError   = "platform_error"
	CodeInvalidRequest  = "invalid_request"
	CodeNotConnected    = "not_connected"
)

// Command is a message from the core to a gateway.
type Command interface{ CommandType() string }

// SendMessage sends text to a chat.
type SendMessage struct {
	RequestID      string          `json:"request_id"`
	ChatID         string          `json:"chat_id"`
	Content        string          `json:"content"`
	ReplyTo        string          `json:"reply_to,omitempty"`
	InlineKeyboard *InlineKeyboard `json:"inline_keyboard,omitempty"`
}

// InlineKeyboard is buttons under a message; a press comes back as a
// callback_query carrying the button's CallbackData.
type InlineKeyboard struct {
	Rows [][]Button `json:"rows"`
}

// Button is one inline button.
type Button struct {
	Text         string `json:"text"`
	CallbackData string `json:"callback_data"`
}

// SendMedia sends an image, a video, audio or a document.
type SendMedia struct {
	RequestID string `json:"request_id"`
	ChatID    string `json:"chat_id"`
	Media     Media  `json:"media"`
	Caption   string `json:"caption,omitempty"`
}

// Media is where a file to send comes from: Source url (URL) or base64
// (Data, MimeType, Filename).
type Media struct {
	Source   string `json:"source"`
	URL      string `json:"url,omitempty"`
	Data     string `json:"data,omitempty"`
	MimeType string `json:"mime_type,omitempty"`
	Filename string `json:"filename,omitempty"`
}

// SendTyping shows a typing indicator for Duration seconds (0 stops it).
type SendTyping struct {
	ChatID   string `json:"chat_id"`
	Duration int    `json:"duration"`
}

// EditMessage replaces the text of a message the gateway sent.
type EditMessage struct {
	RequestID string `json:"request_id"`
	ChatID    string `json:"chat_id"`
	MessageID string `json:"message_id"`
	Content   string `json:"content"`
}

// DeleteMessage deletes a message.
type DeleteMessage struct {
	RequestID string `json:"request_id"`
	ChatID    string `json:"chat_id"`
	MessageID string `json:"message_id"`
}

// Ping asks for a pong.
type Ping struct {
	RequestID string `json:"request_id"`
}

// AnswerCallbackQuery acknowledges a button press, with an optional
// notice for the user.
type AnswerCallbackQuery struct {
	RequestID       string `json:"request_id"`
	CallbackQueryID string `json:"callback_query_id"`
	Text            string `json:"text,omitempty"`
}

// Shutdown asks the gateway to exit.
type Shutdown struct{}

// CommandType returns the command's protocol type.
func (SendMessage) CommandType() string         { return "send_message" }
func (SendMedia) CommandType() string           { return "send_media" }
func (SendTyping) CommandType() string          { return "send_typing" }
func (EditMessage) CommandType() string         { return "edit_message" }
func (DeleteMessage) CommandType() string       { return "delete_message" }
func (Ping) CommandType() string                { return "ping" }
func (AnswerCallbackQuery) CommandType() string { return "answer_callback_query" }
func (Shutdown) CommandType() string            { return "shutdown" }

// Encode returns the command as one line of JSON, newline included, with
// its type first.
func Encode(c Command) []byte {
	body, err := json.Marshal(c)
	if err != nil || len(body) < 2 || body[0] != '{' {
		body = []byte("{}") // the command types hold only strings, ints and slices of them
	}
	b := make([]byte, 0, len(body)+32)
	b = append(b, `{"type":`...)
	b = jsonw.AppendString(b, c.CommandType())
	if len(body) > 2 {
		b = append(b, ',')
	}
	b = append(b, body[1:]...)
	return append(b, '\n')
}

// Event is a message from a gateway to the core.
type Event interface{ EventType() string }

// Ready is the gateway's handshake: it is connected to its platform.
type Ready struct {
	Gateway      string   `json:"gateway"`
	Version      string   `json:"version"`
	Capabilities []string `json:"capabilities"`
}

// MessageReceived is a message a user wrote.
type MessageReceived struct {
	MessageID   ID              `json:"message_id"`
	ChatID      ID              `json:"chat_id"`
	Sender      Sender          `json:"sender"`
	Content     Content         `json:"content"`
	Routing     Routing         `json:"routing"`
	ReplyTo     ID              `json:"reply_to,omitempty"`
	MentionsBot bool            `json:"mentions_bot"`
	ReplyToBot  bool            `json:"reply_to_bot"`
	Timestamp   string          `json:"timestamp,omitempty"`
	Metadata    json.RawMessage `json:"metadata,omitempty"`
}

// Sender is who wrote a message or pressed a button.
type Sender struct {
	ID          ID     `json:"id"`
	Username    string `json:"username,omitempty"`
	DisplayName string `json:"display_name,omitempty"`
}

// Name is the sender's display name, else username, else id.
func (s Sender) Name() string {
	switch {
	case s.DisplayName != "":
		return s.DisplayName
	case s.Username != "":
		return s.Username
	}
	return string(s.ID)
}

// Content is a message's content. Type is text, media, location, contact
// or unknown; only Text is read by the core, the rest is kept for logs.
type Content struct {
	Type      string `json:"type"`
	Text      string `json:"text,omitempty"`
	MediaType string `json:"media_type,omitempty"`
	URL       string `json:"url,omitempty"`
	Caption   string `json:"caption,omitempty"`
}

// Routing is what routes and access rules match on. ChatType is private,
// group, supergroup or channel ("dm" counts as private). Extra holds the
// platform's other routing fields (the parent flattens them into
// routing): strings only, at most MaxRoutingExtras; anything else makes
// the whole line invalid.
type Routing struct {
	Channel  string            `json:"channel"`
	ChatType string            `json:"chat_type"`
	ChatID   ID                `json:"chat_id"`
	SenderID ID                `json:"sender_id"`
	Extra    map[string]string `json:"-"`
}

// MaxRoutingExtras bounds the extra fields of a message's routing.
const MaxRoutingExtras = 32

// UnmarshalJSON reads the known fields and keeps the others, which must
// be strings, in Extra.
func (r *Routing) UnmarshalJSON(b []byte) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return err
	}
	*r = Routing{}
	for k, v := range fields {
		var err error
		switch k {
		case "channel":
			err = json.Unmarshal(v, &r.Channel)
		case "chat_type":
			err = json.Unmarshal(v, &r.ChatType)
		case "chat_id":
			err = json.Unmarshal(v, &r.ChatID)
		case "sender_id":
			err = json.Unmarshal(v, &r.SenderID)
		default:
			if len(r.Extra) >= MaxRoutingExtras {
				return fmt.Errorf("routing has more than %d extra fields", MaxRoutingExtras)
			}
			var s string
			if err := json.Unmarshal(v, &s); err != nil || len(v) == 0 || v[0] != '"' {
				return fmt.Errorf("routing field %q is not a string", k)
			}
			if r.Extra == nil {
				r.Extra = map[string]string{}
			}
			r.Extra[k] = s
		}
		if err != nil {
			return fmt.Errorf("routing field %q: %w", k, err)
		}
	}
	return nil
}

// CallbackQuery is a press on an inline button.
type CallbackQuery struct {
	CallbackQueryID ID     `json:"callback_query_id"`
	ChatID          ID     `json:"chat_id"`
	Sender          Sender `json:"sender"`
	MessageID       ID     `json:"message_id"`
	Data            string `json:"data"`
}

// CommandOK acknowledges a command.
type CommandOK struct {
	RequestID string `json:"request_id"`
	MessageID ID     `json:"message_id,omitempty"`
}

// CommandError refuses a command.
type CommandError struct {
	RequestID string `json:"request_id"`
	Code      string `json:"code"`
	Message   string `json:"message"`
}

// Pong answers a ping.
type Pong struct {
	RequestID     string `json:"request_id"`
	UptimeSeconds int64  `json:"uptime_seconds"`
	Connected     bool   `json:"connected"`
}

// Error is a gateway-level problem; Fatal means the gateway is exiting.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Fatal   bool   `json:"fatal"`
}

// ShuttingDown is the gateway saying it exits (the protocol's shutdown
// event).
type ShuttingDown struct {
	Reason string `json:"reason"`
}

// The methods of auth_required.
const (
	AuthQRCode   = "qr_code"
	AuthPairCode = "pair_code"
)

// AuthRequired is the plugin asking its user to pair it with the platform
// (scan a QR code, type a pairing code).
type AuthRequired struct {
	Method AuthMethod `json:"method"`
}

// AuthMethod is how to pair: Method qr_code (QRData, QRASCII to print) or
// pair_code (Code), valid for ExpiresIn seconds.
type AuthMethod struct {
	Method    string `json:"method"`
	QRData    string `json:"qr_data,omitempty"`
	QRASCII   string `json:"qr_ascii,omitempty"`
	Code      string `json:"code,omitempty"`
	ExpiresIn int64  `json:"expires_in"`
}

// AuthSuccess is the plugin saying the pairing worked.
type AuthSuccess struct{}

// EventType returns the event's protocol type.
func (Ready) EventType() string           { return "ready" }
func (MessageReceived) EventType() string { return "message_received" }
func (CallbackQuery) EventType() string   { return "callback_query" }
func (CommandOK) EventType() string       { return "command_ok" }
func (CommandError) EventType() string    { return "command_error" }
func (Pong) EventType() string            { return "pong" }
func (Error) EventType() string           { return "error" }
func (ShuttingDown) EventType() string    { return "shutdown" }
func (AuthRequired) EventType() string    { return "auth_required" }
func (AuthSuccess) EventType() string     { return "auth_success" }

// ID is an identifier a platform may write as a JSON string or number.
type ID string

// UnmarshalJSON takes a string, a number (kept as written) or null.
func (id *ID) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*id = ID(s)
		return nil
	}
	if string(b) == "null" {
		*id = ""
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return err
	}
	*id = ID(n.String())
	return nil
}

package telegram

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// DefaultBaseURL is the Bot API's address.
const DefaultBaseURL = "https://api.telegram.org"

// maxAnswer bounds a Bot API answer read into memory (100 updates of
// small messages are a few tens of KiB).
const maxAnswer = 4 << 20

// Client calls the Bot API. It uses encoding/json: updates are small and
// few (a personal bot sees a handful a minute), the package is already in
// the binary, and struct tags keep the wire shapes readable; fastjson's
// zero-allocation parsing pays off only on hot streams.
//
// The token is part of every URL; errors never carry it (see redact).
type Client struct {
	base  string
	token string
	hc    *http.Client
}

// NewClient returns a client for the Bot API at base (DefaultBaseURL when
// empty). hc nil means a client without a global timeout: each call's ctx
// carries its deadline.
func NewClient(base, token string, hc *http.Client) *Client {
	if base == "" {
		base = DefaultBaseURL
	}
	if hc == nil {
		hc = &http.Client{}
	}
	return &Client{base: strings.TrimRight(base, "/"), token: token, hc: hc}
}

// APIError is an answer with "ok": false.
type APIError struct {
	Method      string
	Code        int    // error_code: 400, 403, 409, 429...
	Description string // e.g. "Bad Request: can't parse entities: ..."
	// RetryAfter is parameters.retry_after, set with 429.
	RetryAfter time.Duration
}

func (e *APIError) Error() string {
	return fmt.Sprintf("telegram %s: %d %s", e.Method, e.Code, e.Description)
}

// badEntities reports Telegram refusing a message's HTML.
func badEntities(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Code == 400 && strings.Contains(ae.Description, "can't parse entities")
}

// notModified reports an edit that changed nothing (harmless).
func notModified(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Code == 400 && strings.Contains(ae.Description, "message is not modified")
}

// notSent reports an error after which the message surely did not reach
// the chat: Telegram answered with an error, or the connection was never
// made. Other network errors leave it unknown.
func notSent(err error) bool {
	var ae *APIError
	if errors.As(err, &ae) {
		return true
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op == "dial" {
		return true
	}
	var de *net.DNSError
	return errors.As(err, &de)
}

type envelope struct {
	OK          bool            `json:"ok"`
	Result      json.RawMessage `json:"result"`
	ErrorCode   int             `json:"error_code"`
	Description string          `json:"description"`
	Parameters  *struct {
		RetryAfter int `json:"retry_after"`
	} `json:"parameters"`
}

// call posts params as JSON to method and decodes the result into out.
func (c *Client) call(ctx context.Context, method string, params, out any) error {
	body, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("telegram %s: %w", method, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/bot"+c.token+"/"+method, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("telegram %s: %w", method, c.redact(err))
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("telegram %s: %w", method, c.redact(err))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return fmt.Errorf("telegram %s: %w", method, c.redact(err))
	}
	var env envelope
	if err := json.Unmarshal(data, &env); err != nil {
		return fmt.Errorf("telegram %s: HTTP %d with an unreadable answer", method, resp.StatusCode)
	}
	if !env.OK {
		e := &APIError{Method: method, Code: env.ErrorCode, Description: env.Description}
		if env.Parameters != nil {
			e.RetryAfter = time.Duration(env.Parameters.RetryAfter) * time.Second
		}
		return e
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(env.Result, out); err != nil {
		return fmt.Errorf("telegram %s: unexpected result: %w", method, err)
	}
	return nil
}

// redact takes the token out of an error's URL (net/http puts the URL in
// its *url.Error) and, for other errors, out of their text.
func (c *Client) redact(err error) error {
	if c.token == "" {
		return err
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		ue.URL = strings.ReplaceAll(ue.URL, c.token, "[redacted]")
		return err
	}
	if strings.Contains(err.Error(), c.token) {
		return errors.New(strings.ReplaceAll(err.Error(), c.token, "[redacted]"))
	}
	return err
}

// GetMe returns the bot's own user (its id and @username, for mentions).
func (c *Client) GetMe(ctx context.Context) (User, error) {
	var u User
	err := c.call(ctx, "getMe", struct{}{}, &u)
	return u, err
}

// GetUpdates long-polls for updates from offset on, waiting up to timeout
// on the server's side; ctx should allow more than that.
func (c *Client) GetUpdates(ctx context.Context, offset int64, timeout time.Duration) ([]Update, error) {
	params := struct {
		Offset  int64    `json:"offset,omitempty"`
		Timeout int      `json:"timeout"`
		Allowed []string `json:"allowed_updates"`
	}{offset, int(timeout / time.Second), []string{"message", "callback_query"}}
	var raw json.RawMessage
	if err := c.call(ctx, "getUpdates", params, &raw); err != nil {
		return nil, err
	}
	ups, err := ParseUpdates(raw)
	if err != nil {
		return nil, fmt.Errorf("telegram getUpdates: unexpected result: %w", err)
	}
	return ups, nil
}

// Text is a message to send or an edit: HTML when ParseMode is "HTML".
type Text struct {
	ChatID    int64           `json:"chat_id"`
	MessageID int64           `json:"message_id,omitempty"` // edits only
	Text      string          `json:"text"`
	ParseMode string          `json:"parse_mode,omitempty"`
	Keyboard  *InlineKeyboard `json:"reply_markup,omitempty"`
}

// SendMessage sends a message and returns it (its id, for edits).
func (c *Client) SendMessage(ctx context.Context, t Text) (Message, error) {
	t.MessageID = 0
	var m Message
	err := c.call(ctx, "sendMessage", t, &m)
	return m, err
}

// EditMessageText replaces a message's text (and drops its keyboard unless
// t.Keyboard is set).
func (c *Client) EditMessageText(ctx context.Context, t Text) error {
	return c.call(ctx, "editMessageText", t, nil)
}

// SendChatAction shows "typing…" (action "typing") for about 5 seconds.
func (c *Client) SendChatAction(ctx context.Context, chatID int64, action string) error {
	return c.call(ctx, "sendChatAction", struct {
		ChatID int64  `json:"chat_id"`
		Action string `json:"action"`
	}{chatID, action}, nil)
}

// AnswerCallbackQuery acknowledges a button press, with a short notice.
func (c *Client) AnswerCallbackQuery(ctx context.Context, id, text string) error {
	return c.call(ctx, "answerCallbackQuery", struct {
		ID   string `json:"callback_query_id"`
		Text string `json:"text,omitempty"`
	}{id, text}, nil)
}

// GetFile prepares a file for download.
func (c *Client) GetFile(ctx context.Context, fileID string) (File, error) {
	var f File
	err := c.call(ctx, "getFile", struct {
		FileID string `json:"file_id"`
	}{fileID}, &f)
	return f, err
}

// ErrTooLarge is returned by Download for a file over its size cap.
var ErrTooLarge = errors.New("the file is larger than the limit")

// Download copies the file at path (from GetFile) to w, at most max bytes.
func (c *Client) Download(ctx context.Context, path string, w io.Writer, max int64) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/file/bot"+c.token+"/"+path, nil)
	if err != nil {
		return 0, fmt.Errorf("telegram download: %w", c.redact(err))
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, fmt.Errorf("telegram download: %w", c.redact(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("telegram download: HTTP %d", resp.StatusCode)
	}
	n, err := io.Copy(w, io.LimitReader(resp.Body, max+1))
	if err != nil {
		return n, fmt.Errorf("telegram download: %w", c.redact(err))
	}
	if n > max {
		return n, ErrTooLarge
	}
	return n, nil
}

package plugin

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// MaxLine bounds one line of a plugin's stdout; a longer line is skipped
// whole.
const MaxLine = 1 << 20

// errLineTooLong reports a line over MaxLine (skipped).
var errLineTooLong = fmt.Errorf("line longer than %d KiB skipped", MaxLine>>10)

// Parse reads one line a gateway wrote. It is strict about what the core
// needs (a type; the ids and content of a message; the version of ready)
// and lenient about the rest: unknown fields are ignored, and an unknown
// type gives (nil, nil) so that newer gateways keep working.
func Parse(line []byte) (Event, error) {
	line = bytes.TrimSpace(line)
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(line, &head); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	var ev Event
	var err error
	switch head.Type {
	case "":
		return nil, errors.New(`no "type"`)
	case "ready":
		ev, err = decode[Ready](line, checkReady)
	case "message_received":
		ev, err = decode[MessageReceived](line, checkMessage)
	case "callback_query":
		ev, err = decode[CallbackQuery](line, checkCallback)
	case "command_ok":
		ev, err = decode[CommandOK](line, nil)
	case "command_error":
		ev, err = decode[CommandError](line, nil)
	case "pong":
		ev, err = decode[Pong](line, nil)
	case "error":
		ev, err = decode[Error](line, nil)
	case "shutdown":
		ev, err = decode[ShuttingDown](line, nil)
	case "auth_required":
		ev, err = decode[AuthRequired](line, checkAuth)
	case "auth_success":
		ev, err = decode[AuthSuccess](line, nil)
	default:
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", head.Type, err)
	}
	return ev, nil
}

func decode[T Event](line []byte, check func(*T) error) (Event, error) {
	var v T
	if err := json.Unmarshal(line, &v); err != nil {
		return nil, err
	}
	if check != nil {
		if err := check(&v); err != nil {
			return nil, err
		}
	}
	return v, nil
}

func checkReady(r *Ready) error {
	if r.Version == "" {
		return errors.New(`no "version"`)
	}
	return nil
}

// checkMessage fills the ids a gateway gave only in routing, and refuses a
// message without a chat, a sender or a content type.
func checkMessage(m *MessageReceived) error {
	if m.ChatID == "" {
		m.ChatID = m.Routing.ChatID
	}
	if m.Sender.ID == "" {
		m.Sender.ID = m.Routing.SenderID
	}
	switch {
	case m.ChatID == "":
		return errors.New(`no "chat_id"`)
	case m.Sender.ID == "":
		return errors.New(`no "sender.id"`)
	case m.Content.Type == "":
		return errors.New(`no "content.type"`)
	}
	return nil
}

func checkAuth(a *AuthRequired) error {
	switch a.Method.Method {
	case AuthQRCode, AuthPairCode:
		return nil
	}
	return fmt.Errorf(`"method.method" %q is not qr_code or pair_code`, a.Method.Method)
}

func checkCallback(c *CallbackQuery) error {
	switch {
	case c.CallbackQueryID == "":
		return errors.New(`no "callback_query_id"`)
	case c.ChatID == "":
		return errors.New(`no "chat_id"`)
	}
	return nil
}

// CheckVersion reports, as a warning, a gateway's protocol version that is
// not the one agnx-lite speaks: another major version (v2, 2.0) or
// another version of major 1 (v1beta1, v1). The plugin keeps running, as
// with the parent; nil for exactly Version.
func CheckVersion(v string) error {
	if v == Version {
		return nil
	}
	s := strings.TrimPrefix(strings.TrimPrefix(v, "v"), "V")
	end := 0
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	if major, err := strconv.Atoi(s[:end]); err != nil || major != 1 {
		return fmt.Errorf("the plugin speaks protocol version %q, another major version than agnx-lite's %s: it may not work; update the plugin or agnx-lite", v, Version)
	}
	return fmt.Errorf("the plugin speaks protocol version %q, agnx-lite speaks %s: some messages may not work; update the plugin or agnx-lite", v, Version)
}

// lineReader reads lines of at most max bytes without holding more than
// that: a longer line is discarded as it streams by.
type lineReader struct {
	r   *bufio.Reader
	max int
	buf []byte
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next returns the next line without its newline; the slice is valid
// until the following call. A line over max gives errLineTooLong, and the
// reader goes on with the line after it.
func (lr *lineReader) next() ([]byte, error) {
	if cap(lr.buf) > 64<<10 {
		lr.buf = nil // do not keep a huge line's buffer around
	}
	lr.buf = lr.buf[:0]
	tooLong := false
	for {
		chunk, err := lr.r.ReadSlice('\n')
		if !tooLong {
			if len(lr.buf)+len(chunk) > lr.max+1 {
				tooLong, lr.buf = true, lr.buf[:0]
			} else {
				lr.buf = append(lr.buf, chunk...)
			}
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case tooLong && (err == nil || len(chunk) > 0):
			return nil, errLineTooLong
		case err != nil && (len(lr.buf) == 0 || !errors.Is(err, io.EOF)):
			return nil, err
		}
		return bytes.TrimRight(lr.buf, "\r\n"), nil
	}
}

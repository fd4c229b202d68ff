package telegram

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// inboxDir is where files sent to an agent land, inside its workspace.
const inboxDir = "inbox"

// downloadTimeout bounds a download: 20 MB over a slow uplink.
const downloadTimeout = 5 * time.Minute

// content is what the agent is told of a message: its text, or for a
// photo or document where it was saved (and the caption). ok false means
// the chat was already answered and nothing goes to the agent.
func (g *poller) content(ctx context.Context, m *Message, agent string) (string, bool) {
	var saved, what string
	var err error
	switch {
	case len(m.Photo) > 0:
		what = "a photo"
		saved, err = g.savePhoto(ctx, m, agent)
	case m.Document != nil:
		what = fmt.Sprintf("a document (%s)", m.Document.FileName)
		if m.Document.FileName == "" {
			what = "a document"
		}
		saved, err = g.saveDocument(ctx, m, agent)
	case m.Text != "":
		return m.Text, true
	default:
		g.bot.say(ctx, m.Chat.ID, "I can read text, photos and documents; this kind of message is not supported yet.")
		return "", false
	}
	if err != nil {
		g.bot.log.Warn("telegram: cannot save a file", "chat_id", m.Chat.ID, "agent", agent, "err", err)
		why := "it could not be downloaded; please send it again"
		if errors.Is(err, ErrTooLarge) {
			why = fmt.Sprintf("it is larger than %d MB", g.o.MaxFileBytes>>20)
		}
		g.bot.say(ctx, m.Chat.ID, "Sorry, I could not take that file: "+why+".")
		return "", false
	}
	text := fmt.Sprintf("[the user sent %s, saved as %s]", what, saved)
	if c := strings.TrimSpace(m.Caption); c != "" {
		text += "\n" + c
	}
	return text, true
}

// savePhoto saves the largest size within the cap.
func (g *poller) savePhoto(ctx context.Context, m *Message, agent string) (string, error) {
	best := -1
	for i, p := range m.Photo {
		if p.FileSize <= g.o.MaxFileBytes && (best < 0 || p.Width*p.Height >= m.Photo[best].Width*m.Photo[best].Height) {
			best = i
		}
	}
	if best < 0 {
		return "", ErrTooLarge
	}
	base := "photo-" + strconv.FormatInt(m.MessageID, 10)
	return g.save(ctx, m.Photo[best].FileID, agent, func(tgPath string) string {
		if ext := safeExt(path.Ext(tgPath)); ext != "" {
			return base + ext
		}
		return base + ".jpg"
	})
}

func (g *poller) saveDocument(ctx context.Context, m *Message, agent string) (string, error) {
	d := m.Document
	if d.FileSize > g.o.MaxFileBytes {
		return "", ErrTooLarge
	}
	name := strconv.FormatInt(m.MessageID, 10) + "-" + safeName(d.FileName)
	return g.save(ctx, d.FileID, agent, func(tgPath string) string {
		if path.Ext(name) == "" {
			return name + safeExt(path.Ext(tgPath))
		}
		return name
	})
}

// save downloads a file into the agent's workspace as inbox/NAME (named
// given Telegram's path for it), and returns that relative path. It
// writes a temporary file and renames it, so a crash leaves no half file
// under the final name; the same message saves to the same name, so a
// message fetched again after a crash overwrites its own file.
func (g *poller) save(ctx context.Context, fileID, agent string, named func(tgPath string) string) (string, error) {
	a, err := g.o.Agents.Agent(agent)
	if err != nil {
		return "", err
	}
	cctx, cancel := context.WithTimeout(ctx, downloadTimeout)
	defer cancel()
	f, err := g.bot.api.GetFile(cctx, fileID)
	if err != nil {
		return "", err
	}
	if f.FileSize > g.o.MaxFileBytes {
		return "", ErrTooLarge
	}
	dir := filepath.Join(a.Workspace, inboxDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	name := named(f.FilePath)
	tmp, err := os.CreateTemp(dir, ".download-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	_, err = g.bot.api.Download(cctx, f.FilePath, tmp, g.o.MaxFileBytes)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", err
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, name)); err != nil {
		return "", err
	}
	return inboxDir + "/" + name, nil
}

// safeName keeps letters, digits, dots, dashes and underscores of a file
// name sent by a stranger to the bot, at most 80 bytes, never hidden and
// never a path.
func safeName(name string) string {
	name = path.Base(strings.ReplaceAll(name, "\\", "/"))
	var b strings.Builder
	for _, r := range name {
		switch {
		case r < 128 && (r == '.' || r == '-' || r == '_' || ('0' <= r && r <= '9') || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z')):
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
		if b.Len() >= 80 {
			break
		}
	}
	s := strings.TrimLeft(b.String(), ".")
	if s == "" || s == "_" {
		return "file"
	}
	return s
}

// safeExt keeps an extension made of up to 8 letters and digits, else "".
func safeExt(ext string) string {
	if len(ext) < 2 || len(ext) > 9 || ext[0] != '.' {
		return ""
	}
	for _, r := range ext[1:] {
		if !(r < 128 && (('0' <= r && r <= '9') || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z'))) {
			return ""
		}
	}
	return strings.ToLower(ext)
}

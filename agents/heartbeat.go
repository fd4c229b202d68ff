package agents

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"
)

// HeartbeatFile is the conventional file whose presence in an agent's
// folder turns its heartbeat on; its text is the heartbeat's instructions.
const HeartbeatFile = "HEARTBEAT.md"

// Bounds of spec.heartbeat.
const (
	// DefaultHeartbeatEvery is the period of a heartbeat that names none.
	DefaultHeartbeatEvery = 30 * time.Minute
	// MinHeartbeatEvery keeps a Pi from spending its day on heartbeats.
	MinHeartbeatEvery = 5 * time.Minute
	// MaxHeartbeatEvery is a week: rarer than that is a schedule's job.
	MaxHeartbeatEvery = 7 * 24 * time.Hour
	// MaxHeartbeatPrompt bounds the instructions' file: it is sent to the
	// model at every heartbeat.
	MaxHeartbeatPrompt = 64 << 10
)

// DefaultHeartbeatPrompt is the heartbeat's instructions when spec.heartbeat
// names no prompt file and the folder has no HEARTBEAT.md.
const DefaultHeartbeatPrompt = "Check whether anything needs the user's attention now: " +
	"reminders that fall due, follow-ups you promised, what your tools can see has changed."

// Heartbeat is an agent's periodic turn (spec.heartbeat, or HEARTBEAT.md
// alone): every Every, within ActiveHours, the agent gets Prompt in a
// session of its own and what it answers is delivered unless it says there
// is nothing to tell.
type Heartbeat struct {
	Every time.Duration
	// ActiveHours is "HH:MM-HH:MM" (it may wrap midnight), read in the
	// scheduler's time zone; empty: any time.
	ActiveHours string
	// DeliverTo is where its messages go; nil: the agent's notify settings,
	// else the chat it last talked with through a gateway.
	DeliverTo *HeartbeatTarget
	// Prompt is the instructions' text; PromptFile the file it was read
	// from, relative to the agent's folder ("" for DefaultHeartbeatPrompt).
	Prompt     string
	PromptFile string
}

// HeartbeatTarget is spec.heartbeat.deliver_to: a gateway's chat.
type HeartbeatTarget struct {
	// Gateway and ChatID name the chat (both required): the gateway
	// (telegram, or a plugin's) and the chat's id on it.
	Gateway string `yaml:"gateway"`
	ChatID  string `yaml:"chat_id"`
}

// heartbeatFile is spec.heartbeat as written.
type heartbeatFile struct {
	// Every is how often, as a duration: 30m, 2h, 1h30m (5m..168h;
	// default 30m).
	Every string `yaml:"every"`
	// ActiveHours is the window "HH:MM-HH:MM" it runs in (it may wrap
	// midnight), read in the scheduler's time zone; empty: any time.
	ActiveHours string `yaml:"active_hours"`
	// DeliverTo is the chat its messages go to; unset: the agent's notify
	// settings, else the chat it last talked with through a gateway.
	DeliverTo *HeartbeatTarget `yaml:"deliver_to"`
	// Prompt names the file of its instructions, relative to the agent's
	// folder; unset: HEARTBEAT.md, or default instructions when there is
	// none.
	Prompt string `yaml:"prompt"`
}

// Summary says in one line what the heartbeat does, for agent validate.
func (h *Heartbeat) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "every %s", fmtEvery(h.Every))
	if h.ActiveHours != "" {
		fmt.Fprintf(&b, " between %s", h.ActiveHours)
	}
	if h.DeliverTo != nil {
		fmt.Fprintf(&b, ", to %s chat %s", h.DeliverTo.Gateway, h.DeliverTo.ChatID)
	} else {
		b.WriteString(", to the agent's notify settings or the chat it last talked with")
	}
	if h.PromptFile != "" {
		fmt.Fprintf(&b, ", instructions from %s", h.PromptFile)
	} else {
		b.WriteString(", default instructions")
	}
	return b.String()
}

// fmtEvery prints a duration without its zero parts: 30m, not 30m0s.
func fmtEvery(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}

// validateHeartbeat checks spec.heartbeat; nil is absent.
func validateHeartbeat(doc *Doc, h *heartbeatFile) error {
	if h == nil {
		return nil
	}
	const p = "spec.heartbeat."
	if _, err := heartbeatEvery(doc, h.Every); err != nil {
		return err
	}
	if h.ActiveHours != "" {
		if err := ParseActiveHours(h.ActiveHours); err != nil {
			return doc.Errorf(p+"active_hours", "spec.heartbeat.active_hours %q %v", h.ActiveHours, err)
		}
	}
	if t := h.DeliverTo; t != nil {
		switch {
		case t.Gateway == "" || t.ChatID == "":
			return doc.Errorf(p+"deliver_to", "spec.heartbeat.deliver_to needs a gateway and a chat_id (e.g. {gateway: telegram, chat_id: \"12345\"})")
		case !ValidName(t.Gateway) || t.Gateway == HeartbeatGateway:
			return doc.Errorf(p+"deliver_to.gateway", "spec.heartbeat.deliver_to.gateway %q is not a gateway's name (telegram, or a plugin's)", t.Gateway)
		case len(t.ChatID) > maxChatID || strings.ContainsFunc(t.ChatID, isControl):
			return doc.Errorf(p+"deliver_to.chat_id", "spec.heartbeat.deliver_to.chat_id must be 1 to %d printable bytes", maxChatID)
		}
	}
	return localRef(doc, p+"prompt", h.Prompt)
}

// HeartbeatGateway is the gateway name of heartbeat sessions: they belong
// to no chat, so no deliver_to may name it.
const HeartbeatGateway = "heartbeat"

// OriginHeartbeat is the Origin of a heartbeat's message, turn and
// notifications. A heartbeat notifies on its own, only of an answer worth
// saying, so the notification path gives its turns no notice.
const OriginHeartbeat = "heartbeat"

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// heartbeatEvery parses spec.heartbeat.every; empty is the default.
func heartbeatEvery(doc *Doc, s string) (time.Duration, error) {
	const path = "spec.heartbeat.every"
	if s == "" {
		return DefaultHeartbeatEvery, nil
	}
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		return 0, doc.Errorf(path, "%s %q is not a duration: write it like 30m, 2h or 1h30m", path, s)
	case d < MinHeartbeatEvery || d > MaxHeartbeatEvery:
		return 0, doc.Errorf(path, "%s %s is out of range %s..%s", path, s, fmtEvery(MinHeartbeatEvery), fmtEvery(MaxHeartbeatEvery))
	}
	return d, nil
}

// ParseActiveHours checks a window "HH:MM-HH:MM" of 24-hour times: start
// and end differ, and an end before the start wraps midnight
// ("22:00-06:00"; "08:00-00:00" runs to midnight). The error completes a
// sentence that names the value.
func ParseActiveHours(s string) error {
	start, end, ok := strings.Cut(s, "-")
	if !ok {
		return errors.New(`is not a window "HH:MM-HH:MM" (e.g. "08:00-22:00")`)
	}
	a, errA := clock(start)
	b, errB := clock(end)
	switch {
	case errA != nil || errB != nil:
		return errors.New(`is not a window "HH:MM-HH:MM" of 24-hour times (e.g. "08:00-22:00")`)
	case a == b:
		return errors.New("starts and ends at the same time: give a window, or leave active_hours out to run at any time")
	}
	return nil
}

// clock reads "HH:MM" into minutes after midnight.
func clock(s string) (int, error) {
	if len(s) != 5 || s[2] != ':' || !allDigits(s[:2]) || !allDigits(s[3:]) {
		return 0, errors.New("not HH:MM")
	}
	h, m := int(s[0]-'0')*10+int(s[1]-'0'), int(s[3]-'0')*10+int(s[4]-'0')
	if h > 23 || m > 59 {
		return 0, errors.New("out of range")
	}
	return h*60 + m, nil
}

func allDigits(s string) bool {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// loadHeartbeat sets a.Heartbeat from spec.heartbeat and the prompt file:
// spec.heartbeat.prompt, else HEARTBEAT.md. The heartbeat is on when
// spec.heartbeat is present or HEARTBEAT.md exists. A named prompt file
// that is missing is a warning (the default instructions are used); one
// that leads out, is not a regular file or is over MaxHeartbeatPrompt
// refuses the agent, as prompt files do.
func (a *Agent) loadHeartbeat(root *os.Root, doc *Doc, hf *heartbeatFile) error {
	const path = "spec.heartbeat.prompt"
	name := HeartbeatFile
	if hf != nil && hf.Prompt != "" {
		name = hf.Prompt
	}
	text, mod, err := readHeartbeat(root, name)
	named := hf != nil && hf.Prompt != ""
	var fail string
	switch {
	case err == nil:
	case errors.Is(err, fs.ErrNotExist) && !named:
		if hf == nil {
			return nil // no spec.heartbeat, no HEARTBEAT.md: no heartbeat
		}
	case errors.Is(err, fs.ErrNotExist):
		a.Warnings = append(a.Warnings, doc.Errorf(path,
			"%s names %s, which does not exist, so the heartbeat uses the default instructions; create the file or remove the key", path, name).Error())
		a.Files = append(a.Files, resolve(a.Dir, name)) // reload when it appears
	case errors.Is(err, ErrOutside):
		fail = "is a link that " + ErrOutside.Error() + outsideFix
	case errors.Is(err, ErrNotRegular):
		fail = ErrNotRegular.Error() + notRegularFix
	default:
		fail = err.Error()
	}
	if fail != "" {
		if named {
			return doc.Errorf(path, "%s %s %s", path, name, fail)
		}
		return &Error{File: resolve(a.Dir, name), Msg: fail}
	}
	h := &Heartbeat{Every: DefaultHeartbeatEvery, Prompt: DefaultHeartbeatPrompt}
	if err == nil {
		h.Prompt, h.PromptFile = text, name
		a.Files = append(a.Files, resolve(a.Dir, name))
		if mod.After(a.ModTime) {
			a.ModTime = mod
		}
	}
	if strings.TrimSpace(h.Prompt) == "" {
		h.Prompt, h.PromptFile = DefaultHeartbeatPrompt, ""
		a.Warnings = append(a.Warnings, fmt.Sprintf("%s is empty, so the heartbeat uses the default instructions; write what it should check", name))
	}
	if hf != nil {
		h.Every, _ = heartbeatEvery(doc, hf.Every) // validated
		h.ActiveHours, h.DeliverTo = hf.ActiveHours, hf.DeliverTo
	}
	a.Heartbeat = h
	return nil
}

// readHeartbeat reads rel inside root: a regular file of at most
// MaxHeartbeatPrompt bytes, never blocking on a FIFO.
func readHeartbeat(root *os.Root, rel string) (string, time.Time, error) {
	f, err := openInside(root, rel)
	if err != nil {
		return "", time.Time{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", time.Time{}, err
	}
	if !st.Mode().IsRegular() {
		return "", time.Time{}, &fs.PathError{Op: "open", Path: rel, Err: ErrNotRegular}
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxHeartbeatPrompt+1))
	if err != nil {
		return "", time.Time{}, err
	}
	if len(data) > MaxHeartbeatPrompt {
		return "", time.Time{}, fmt.Errorf("is larger than %d KiB; keep the heartbeat's instructions short, they go to the model every time", MaxHeartbeatPrompt>>10)
	}
	return string(data), st.ModTime(), nil
}

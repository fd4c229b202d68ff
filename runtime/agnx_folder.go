package runtime

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/agnx-lite/agnx-lite/agents"
)

// Limits on what an import reads: a session folder comes from outside.
const (
	maxAgnxLine   = 16 << 20  // one events.jsonl line
	maxAgnxLog    = 512 << 20 // events.jsonl and its archive together
	maxAgnxState  = 64 << 20  // state.json
	maxAgnxEvents = 1 << 20   // events in one session
)

// agnxStateIn is the part of Agnx's state.json an import needs.
type agnxStateIn struct {
	SchemaVersion string             `json:"schema_version"`
	Agent         string             `json:"agent"`
	Status        string             `json:"status"`
	CreatedAt     time.Time          `json:"created_at"`
	SnapshotAt    time.Time          `json:"snapshot_at"`
	CheckpointSeq uint64             `json:"checkpoint_seq"`
	Conversation  []agnxStateMessage `json:"conversation"`
	Config        agnxConfig         `json:"config"`
}

type agnxStateMessage struct {
	Role       string         `json:"role"`
	Content    string         `json:"content"`
	ToolCalls  []agnxFunction `json:"tool_calls"`
	ToolCallID string         `json:"tool_call_id"`
}

// AgnxLog is an events.jsonl stream as read: its events in order (seq
// kept, or 0) and how many lines were skipped.
type AgnxLog struct {
	Events  []Event
	Seqs    []uint64
	Skipped int
}

// ReadAgnxLog reads events.jsonl lines from r into l, skipping what
// DecodeAgnxLine skips and lines whose seq does not follow the last one
// kept (a line repeated by a compaction cut short). read counts the bytes
// read so far across calls.
func (l *AgnxLog) ReadAgnxLog(r io.Reader, read *int64) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxAgnxLine)
	for sc.Scan() {
		*read += int64(len(sc.Bytes())) + 1
		if *read > maxAgnxLog {
			return fmt.Errorf("the session log is larger than %d MiB: agnx-lite imports sessions up to that size", maxAgnxLog>>20)
		}
		if len(sc.Bytes()) == 0 {
			continue
		}
		seq, evs, ok := DecodeAgnxLine(sc.Bytes())
		if !ok {
			l.Skipped++
			continue
		}
		if n := len(l.Seqs); seq != 0 && n > 0 && seq <= l.Seqs[n-1] {
			l.Skipped++
			continue
		}
		for _, e := range evs {
			l.Events, l.Seqs = append(l.Events, e), append(l.Seqs, seq)
		}
		if len(l.Events) > maxAgnxEvents {
			return fmt.Errorf("the session has more than %d events: agnx-lite imports sessions up to that size", maxAgnxEvents)
		}
	}
	if errors.Is(sc.Err(), bufio.ErrTooLong) {
		return fmt.Errorf("a line is longer than %d MiB: this is not an events.jsonl file", maxAgnxLine>>20)
	}
	return sc.Err()
}

// ReadAgnxSession reads an Agnx session folder ({sessions}/<id>/:
// events.archive.jsonl if any, events.jsonl, state.json if any) into the
// events ImportSession takes. When the log no longer starts with
// session_start (Agnx compacted it after a snapshot), the conversation of
// state.json stands for the events up to its checkpoint. skipped counts
// the lines that could not be read, which Agnx skips too.
func ReadAgnxSession(dir string) (events []Event, skipped int, err error) {
	var l AgnxLog
	var read int64
	found := false
	for _, name := range []string{"events.archive.jsonl", "events.jsonl"} {
		f, err := os.Open(filepath.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, 0, err
		}
		found = true
		err = l.ReadAgnxLog(f, &read)
		f.Close()
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", name, err)
		}
	}
	if len(l.Events) > 0 && l.Events[0].Type == EvSessionStart {
		return AgnxTurns(l.Events), l.Skipped, nil
	}
	st, err := readAgnxState(filepath.Join(dir, "state.json"))
	switch {
	case errors.Is(err, fs.ErrNotExist) && !found:
		return nil, 0, fmt.Errorf("%s holds neither events.jsonl nor state.json: give the folder of one Agnx session ({workspace}/sessions/<id>)", dir)
	case errors.Is(err, fs.ErrNotExist):
		return nil, 0, errors.New("events.jsonl does not start with session_start and there is no state.json: copy the whole session folder")
	case err != nil:
		return nil, 0, err
	}
	events = st.events()
	for i, e := range l.Events {
		if l.Seqs[i] > st.CheckpointSeq {
			events = append(events, e)
		}
	}
	if st.Status == string(SessionCompleted) && events[len(events)-1].Type != EvSessionEnd {
		events = append(events, Event{Type: EvSessionEnd, Reason: "completed", Time: st.SnapshotAt})
	}
	return AgnxTurns(events), l.Skipped, nil
}

func readAgnxState(path string) (*agnxStateIn, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxAgnxState+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxAgnxState {
		return nil, fmt.Errorf("state.json is larger than %d MiB: this is not an Agnx session snapshot", maxAgnxState>>20)
	}
	return parseAgnxState(data)
}

func parseAgnxState(data []byte) (*agnxStateIn, error) {
	var st agnxStateIn
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("state.json cannot be read (%v): copy it again from the Agnx workspace", err)
	}
	if st.SchemaVersion != "1" && st.SchemaVersion != "2" {
		return nil, fmt.Errorf("state.json has schema_version %q, not 1 or 2: export the session from Agnx v0.5 or later", st.SchemaVersion)
	}
	if !agents.ValidName(st.Agent) {
		return nil, fmt.Errorf("state.json names agent %q, which is not a valid agent name: correct it in the file", st.Agent)
	}
	return &st, nil
}

// events brings back the snapshot's conversation as the events that made
// it, all at the snapshot's time.
func (st *agnxStateIn) events() []Event {
	start := Event{Type: EvSessionStart, Agent: st.Agent, Gateway: st.Config.Gateway, ChatID: st.Config.ChatID, Time: st.CreatedAt}
	if d := agents.OnDisconnect(st.Config.OnDisconnect); d == agents.OnDisconnectPause || d == agents.OnDisconnectContinue {
		start.OnDisconnect = d
	}
	out := []Event{start}
	for i := range st.Conversation {
		if e, ok := st.Conversation[i].event(st.SnapshotAt, st.Agent); ok {
			out = append(out, e)
		}
	}
	return out
}

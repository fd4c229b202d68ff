package workers

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/valyala/fastjson"
)

// maxClaudeLine bounds one line of claude's output; a --output-format
// json result is one line.
const maxClaudeLine = 4 << 20

// maxStrayLines is how many lines that are not JSON claude may print
// before its output counts as garbage.
const maxStrayLines = 64

// maxDenials bounds the refused tool calls reported.
const maxDenials = 20

// claudeStream reads claude's stream-json (or json) output: the session
// id from system/init or the result, a progress line per tool_use, and
// the result.
type claudeStream struct {
	p       fastjson.Parser
	say     func(string)
	session string
	stray   int
	result  *claudeResult
}

type claudeResult struct {
	subtype string
	isError bool
	text    string
	turns   int
	cost    float64
	denials []string
}

// read consumes out until it ends; an error says why the output is not
// claude's.
func (s *claudeStream) read(out io.Reader) error {
	br := bufio.NewReaderSize(out, 64<<10)
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > maxClaudeLine {
			return fmt.Errorf("it wrote a line longer than %d MiB", maxClaudeLine>>20)
		}
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if lerr := s.line(line); lerr != nil {
			return lerr
		}
		line = line[:0]
		if err != nil {
			return nil
		}
	}
}

// line takes one line of output.
func (s *claudeStream) line(b []byte) error {
	b = trimSpace(b)
	if len(b) == 0 {
		return nil
	}
	v, err := s.p.ParseBytes(b)
	if err != nil || v.Type() != fastjson.TypeObject {
		if s.stray++; s.stray > maxStrayLines {
			return fmt.Errorf("it wrote %q and more lines that are not stream-json", cut(string(b), 60))
		}
		return nil
	}
	if id := string(v.GetStringBytes("session_id")); id != "" {
		s.session = cut(id, 200)
	}
	switch string(v.GetStringBytes("type")) {
	case "assistant":
		for _, c := range v.GetArray("message", "content") {
			if string(c.GetStringBytes("type")) == "tool_use" && s.say != nil {
				s.say(toolUseLine(string(c.GetStringBytes("name")), c.Get("input")))
			}
		}
	case "result":
		s.result = parseResult(v)
	}
	return nil
}

func parseResult(v *fastjson.Value) *claudeResult {
	r := &claudeResult{subtype: cut(string(v.GetStringBytes("subtype")), 64), isError: v.GetBool("is_error"),
		turns: v.GetInt("num_turns"), cost: v.GetFloat64("total_cost_usd")}
	r.text = string(v.GetStringBytes("result"))
	if len(r.text) > maxFinalText {
		r.text = cut(r.text, maxFinalText) + "\n[the rest of the worker's message was cut]"
	}
	for _, d := range v.GetArray("permission_denials") {
		if len(r.denials) == maxDenials {
			r.denials = append(r.denials, "…")
			break
		}
		r.denials = append(r.denials, toolUseLine(string(d.GetStringBytes("tool_name")), d.Get("tool_input")))
	}
	return r
}

// toolUseLine is a claude tool call as one short line: its name and
// what it acts on.
func toolUseLine(name string, in *fastjson.Value) string {
	subject := ""
	for _, k := range []string{"command", "file_path", "notebook_path", "path", "pattern", "url", "query", "description"} {
		if s := string(in.GetStringBytes(k)); s != "" {
			subject = s
			break
		}
	}
	name = cut(name, 64)
	if subject == "" {
		return name
	}
	return cut(name+" "+strings.ReplaceAll(subject, "\n", " "), maxProgressLine)
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r' || b[len(b)-1] == ' ') {
		b = b[:len(b)-1]
	}
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	return b
}

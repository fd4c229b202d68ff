package textcall

import (
	"strings"

	"github.com/valyala/fastjson"
)

// Call is a tool call found in text. Arguments is a JSON object as text.
type Call struct {
	Name      string
	Arguments string
}

// Markers that introduce text-form calls.
const (
	openTag    = "<tool_call>"
	closeTag   = "</tool_call>"
	fence      = "```"
	mistralTag = "[TOOL_CALLS]"
	mistralArg = "[ARGS]"
	pythonTag  = "<|python_tag|>"
)

// span is a byte range of the text that held calls.
type span struct{ from, to int }

// Extract returns the tool calls written as text in text, and the text
// without their markup, trimmed. known reports whether a tool exists; nil
// accepts every name. Without calls, rest is the trimmed text.
func Extract(text string, known func(name string) bool) (calls []Call, rest string) {
	if known == nil {
		known = func(string) bool { return true }
	}
	for _, find := range [...]func(string, func(string) bool) ([]Call, []span){
		tagged, fenced, marked,
	} {
		if calls, spans := find(text, known); len(calls) > 0 {
			return calls, cut(text, spans)
		}
	}
	trimmed := strings.TrimSpace(text)
	if calls, ok := parseCalls(trimmed, known, true); ok {
		return calls, ""
	}
	return nil, trimmed
}

// tagged finds <tool_call> blocks; the last may lack its closing tag.
func tagged(text string, known func(string) bool) (calls []Call, spans []span) {
	for pos := 0; ; {
		i := strings.Index(text[pos:], openTag)
		if i < 0 {
			return calls, spans
		}
		start := pos + i
		body := text[start+len(openTag):]
		end := len(text)
		if j := strings.Index(body, closeTag); j >= 0 {
			body = body[:j]
			end = start + len(openTag) + j + len(closeTag)
		}
		if cs, ok := parseBlock(unfence(strings.TrimSpace(body)), known); ok {
			calls = append(calls, cs...)
			spans = append(spans, span{start, end})
		}
		pos = start + len(openTag)
	}
}

// parseBlock parses the body of a <tool_call> block. Small models often
// add a stray brace or a word after the object, so the first JSON value is
// tried when the whole body does not parse.
func parseBlock(body string, known func(string) bool) ([]Call, bool) {
	if cs, ok := parseCalls(body, known, false); ok {
		return cs, true
	}
	if n := valueEnd(body); n > 0 && n < len(body) {
		return parseCalls(body[:n], known, false)
	}
	return nil, false
}

// unfence strips a ``` fence some models put inside a <tool_call> block.
func unfence(s string) string {
	if !strings.HasPrefix(s, fence) {
		return s
	}
	nl := strings.IndexByte(s, '\n')
	if nl < 0 {
		return s
	}
	return strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s[nl+1:]), fence))
}

// fenced finds ``` blocks whose language is empty, json or tool_call and
// whose content is a call or an array of calls.
func fenced(text string, known func(string) bool) (calls []Call, spans []span) {
	for pos := 0; pos < len(text); {
		i := strings.Index(text[pos:], fence)
		if i < 0 {
			break
		}
		start := pos + i
		nl := strings.IndexByte(text[start:], '\n')
		if nl < 0 {
			break
		}
		lang := strings.ToLower(strings.TrimSpace(text[start+len(fence) : start+nl]))
		bodyStart := start + nl + 1
		bodyEnd, end := len(text), len(text)
		if j := strings.Index(text[bodyStart:], fence); j >= 0 {
			bodyEnd, end = bodyStart+j, bodyStart+j+len(fence)
		}
		if callLang(lang) {
			strict := lang != "tool_call" && lang != "tool_calls"
			if cs, ok := parseCalls(strings.TrimSpace(text[bodyStart:bodyEnd]), known, strict); ok {
				calls = append(calls, cs...)
				spans = append(spans, span{start, end})
			}
		}
		pos = end
	}
	return calls, spans
}

// callLang reports whether a fence's info string may introduce a call.
func callLang(lang string) bool {
	switch lang {
	case "", "json", "tool_call", "tool_calls", "tool_code":
		return true
	}
	return false
}

// marked finds Mistral's [TOOL_CALLS] and Llama's <|python_tag|>.
func marked(text string, known func(string) bool) (calls []Call, spans []span) {
	for _, tag := range [...]string{mistralTag, pythonTag} {
		i := strings.Index(text, tag)
		if i < 0 {
			continue
		}
		after := text[i+len(tag):]
		if tag == mistralTag {
			if cs, n, ok := mistralNamed(after, known); ok {
				return cs, []span{{i, i + len(tag) + n}}
			}
		}
		lead := len(after) - len(strings.TrimLeft(after, " \t\r\n"))
		n := valueEnd(after[lead:])
		if n == 0 {
			continue
		}
		if cs, ok := parseCalls(after[lead:lead+n], known, false); ok {
			return cs, []span{{i, i + len(tag) + lead + n}}
		}
	}
	return nil, nil
}

// mistralNamed parses the newer Mistral form name[ARGS]{...}; n is the
// length consumed.
func mistralNamed(s string, known func(string) bool) (calls []Call, n int, ok bool) {
	j := strings.Index(s, mistralArg)
	if j <= 0 || strings.ContainsAny(s[:j], " \n{[\"") {
		return nil, 0, false
	}
	name := s[:j]
	args := s[j+len(mistralArg):]
	end := valueEnd(args)
	if end == 0 || !known(name) || !isObject(args[:end]) {
		return nil, 0, false
	}
	return []Call{{Name: name, Arguments: compact(args[:end])}}, j + len(mistralArg) + end, true
}

// cut removes spans from text and trims the result.
func cut(text string, spans []span) string {
	var b strings.Builder
	last := 0
	for _, s := range spans {
		if s.from < last {
			continue
		}
		b.WriteString(text[last:s.from])
		last = s.to
	}
	b.WriteString(text[last:])
	return strings.TrimSpace(b.String())
}

// valueEnd returns the length of the JSON object or array s starts with,
// found by matching brackets outside strings, or 0.
func valueEnd(s string) int {
	if s == "" || (s[0] != '{' && s[0] != '[') {
		return 0
	}
	depth, inStr, esc := 0, false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inStr && esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case inStr && c == '"':
			inStr = false
		case inStr:
		case c == '"':
			inStr = true
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return 0
}

func isObject(s string) bool {
	s = strings.TrimSpace(s)
	return strings.HasPrefix(s, "{") && fastjson.Validate(s) == nil
}

// compact re-encodes a valid JSON value without insignificant spaces.
func compact(s string) string {
	var p fastjson.Parser
	v, err := p.Parse(s)
	if err != nil {
		return s
	}
	return string(v.MarshalTo(nil))
}

package agents

import (
	"errors"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
)

// Error is a problem in a file the user wrote, located by line. Its text is
// one sentence, "file:line: msg", suitable to show as is.
type Error struct {
	File string
	// Line is 1-based; 0 means the line is not known.
	Line int
	Msg  string
}

func (e *Error) Error() string {
	switch {
	case e.File == "":
		return e.Msg
	case e.Line <= 0:
		return e.File + ": " + e.Msg
	default:
		return e.File + ":" + strconv.Itoa(e.Line) + ": " + e.Msg
	}
}

// YAMLError converts an error from goccy/go-yaml, whose text is a
// multi-line excerpt of the source, into a one-line *Error for file. Errors
// that already are *Error pass through; others keep their text on line 0.
// It returns nil for a nil err.
func YAMLError(file string, err error) error {
	if err == nil {
		return nil
	}
	var own *Error
	if errors.As(err, &own) {
		return own
	}
	var ye yaml.Error
	if errors.As(err, &ye) {
		line := 0
		if tk := ye.GetToken(); tk != nil && tk.Position != nil {
			line = tk.Position.Line
		}
		return &Error{File: file, Line: line, Msg: oneLine(ye.GetMessage())}
	}
	return &Error{File: file, Msg: oneLine(err.Error())}
}

// oneLine keeps the first line of msg, as goccy appends source excerpts
// after a newline, and drops goccy's leading "[line:col] " marker.
func oneLine(msg string) string {
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	if strings.HasPrefix(msg, "[") {
		if i := strings.Index(msg, "] "); i > 0 && strings.IndexByte(msg[:i], ':') > 0 {
			msg = msg[i+2:]
		}
	}
	return strings.TrimSpace(msg)
}

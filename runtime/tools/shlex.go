package tools

import (
	"errors"
	"strings"
)

// Limits of SplitArgs: a CLI tool's args string comes from the model.
const (
	maxArgsBytes = 64 << 10
	maxArgsWords = 1024
)

// SplitArgs splits a CLI tool's args (or command) the way a POSIX shell splits words:
// on unquoted blanks, with '...' taken literally, "..." honouring \" \\
// \$ \` and a backslash escaping the next byte outside quotes. Nothing
// else of a shell is there: no variables, globs, redirections, pipes or
// command separators, so "; rm -rf /" is the words ";", "rm", "-rf", "/"
// given to the tool, never a command.
func SplitArgs(s string) ([]string, error) {
	if len(s) > maxArgsBytes {
		return nil, errors.New("args is longer than 64 KiB: pass less, or have the tool read a file")
	}
	var (
		words []string
		w     strings.Builder
		in    bool // inside a word (an empty quoted word counts)
	)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
			continue
		case c == '\\':
			if i+1 < len(s) {
				i++
				if s[i] != '\n' {
					w.WriteByte(s[i])
				}
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("args has an unclosed ' quote: close it")
			}
			w.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case c == '"':
			j, err := doubleQuoted(s, i+1, &w)
			if err != nil {
				return nil, err
			}
			i = j
		default:
			w.WriteByte(c)
		}
		in = true
		if len(words) >= maxArgsWords {
			return nil, errors.New("args has more than 1024 words: pass fewer")
		}
	}
	if in {
		words = append(words, w.String())
	}
	if len(words) > maxArgsWords {
		return nil, errors.New("args has more than 1024 words: pass fewer")
	}
	return words, nil
}

// doubleQuoted copies the "..." starting at s[i] into w and returns the
// index of its closing quote.
func doubleQuoted(s string, i int, w *strings.Builder) (int, error) {
	for ; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			return i, nil
		case c == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`\n", s[i+1]) >= 0:
			i++
			if s[i] != '\n' {
				w.WriteByte(s[i])
			}
		default:
			w.WriteByte(c)
		}
	}
	return 0, errors.New(`args has an unclosed " quote: close it`)
}

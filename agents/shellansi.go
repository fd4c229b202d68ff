package agents

import (
	"strings"
	"unicode/utf8"
)

// ansiC reads the $'...' at sp.i into w, its escapes decoded as bash
// decodes them, so that $'\x72m' and $'\162\155' read rm, as the shell
// will run them.
func (sp *shellSplitter) ansiC(w *strings.Builder) {
	s := sp.s
	i := sp.i + 2
	for i < len(s) && s[i] != '\'' {
		if s[i] != '\\' || i+1 >= len(s) {
			w.WriteByte(s[i])
			i++
			continue
		}
		c := s[i+1]
		i += 2
		switch c {
		case 'a', 'b', 'e', 'E', 'f', 'n', 'r', 't', 'v':
			w.WriteByte(ansiEscapes[c])
		case '\\', '\'', '"', '?':
			w.WriteByte(c)
		case 'c':
			if i < len(s) {
				w.WriteByte(s[i] & 0x1f)
				i++
			}
		case 'x', 'u', 'U':
			size := 2
			switch c {
			case 'u':
				size = 4
			case 'U':
				size = 8
			}
			v, n := digits(s[i:], 16, size)
			switch {
			case n == 0:
				w.WriteByte('\\')
				w.WriteByte(c)
			case c == 'x':
				w.WriteByte(byte(v))
			case utf8.ValidRune(rune(v)):
				w.WriteRune(rune(v))
			}
			i += n
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v, n := digits(s[i-1:], 8, 3)
			w.WriteByte(byte(v))
			i += n - 1
		default:
			w.WriteByte('\\')
			w.WriteByte(c)
		}
	}
	sp.i = min(i+1, len(s))
}

var ansiEscapes = [128]byte{'a': '\a', 'b': '\b', 'e': 0x1b, 'E': 0x1b, 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t', 'v': '\v'}

// digits reads up to max digits of base at the start of s: their value
// and how many there were.
func digits(s string, base, max int) (int, int) {
	v, n := 0, 0
	for n < max && n < len(s) {
		c := s[n]
		if c >= 'A' && c <= 'F' {
			c += 'a' - 'A'
		}
		d := strings.IndexByte("0123456789abcdef", c)
		if d < 0 || d >= base {
			break
		}
		v = v*base + d
		n++
	}
	return v, n
}

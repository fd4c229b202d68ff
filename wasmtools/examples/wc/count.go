package main

import (
	"errors"
	"io"
)

// Counts is what wc reports, with the meaning of the Unix tool: lines are
// newline characters, words are runs of non-space bytes.
type Counts struct {
	Lines int64 `json:"lines"`
	Words int64 `json:"words"`
	Bytes int64 `json:"bytes"`
}

// Count reads r to the end.
func Count(r io.Reader) (Counts, error) {
	var c Counts
	buf := make([]byte, 32<<10)
	inWord := false
	for {
		n, err := r.Read(buf)
		for _, b := range buf[:n] {
			space := b == ' ' || b == '\n' || b == '\t' || b == '\r' || b == '\v' || b == '\f'
			if b == '\n' {
				c.Lines++
			}
			if !space && !inWord {
				c.Words++
			}
			inWord = !space
		}
		c.Bytes += int64(n)
		if errors.Is(err, io.EOF) {
			return c, nil
		}
		if err != nil {
			return c, err
		}
	}
}

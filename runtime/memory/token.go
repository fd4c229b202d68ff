package memory

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// maxTerm is the longest term kept, in bytes; longer words (hashes, base64)
// are cut, so a posting key stays small.
const maxTerm = 48

// stopWords are English words too common to rank by; made on first use,
// not at start.
var stopWords = sync.OnceValue(func() map[string]struct{} {
	m := make(map[string]struct{})
	for _, w := range strings.Fields(`a an and are as at be but by for from has have he her his i
		if in into is it its me my no not of on or our she so that the their them then there these
		they this to was we were what when where which who will with you your`) {
		m[w] = struct{}{}
	}
	return m
})

// tokenize calls fn with each term of s: a run of letters and digits,
// lowercased, stop words dropped, cut at maxTerm bytes, with a light
// English stemming (plural and -ing/-ed endings of longer words).
func tokenize(s string, fn func(term string)) {
	var b strings.Builder
	flush := func() {
		if b.Len() == 0 {
			return
		}
		t := b.String()
		b.Reset()
		if _, stop := stopWords()[t]; stop {
			return
		}
		fn(stem(t))
	}
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) {
			if b.Len()+utf8.RuneLen(unicode.ToLower(r)) <= maxTerm {
				b.WriteRune(unicode.ToLower(r))
			}
			continue
		}
		flush()
	}
	flush()
}

// stem strips a plural ending, then an -ing or -ed, from ASCII words of
// four letters or more, keeping at least four letters ("meetings",
// "meeting" and "meet" agree); other words stay as they are.
func stem(t string) string {
	if len(t) < 4 || !isASCII(t) {
		return t
	}
	switch {
	case strings.HasSuffix(t, "ies"):
		t = t[:len(t)-3] + "y"
	case strings.HasSuffix(t, "sses"), strings.HasSuffix(t, "shes"), strings.HasSuffix(t, "ches"), strings.HasSuffix(t, "xes"):
		t = t[:len(t)-2]
	case strings.HasSuffix(t, "ss"), strings.HasSuffix(t, "us"), strings.HasSuffix(t, "is"):
	case strings.HasSuffix(t, "s"):
		t = t[:len(t)-1]
	}
	for _, suf := range []string{"ing", "ed"} {
		if strings.HasSuffix(t, suf) && len(t)-len(suf) >= 4 {
			return t[:len(t)-len(suf)]
		}
	}
	return t
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// termFreqs counts the terms of s.
func termFreqs(s string) (tf map[string]int, length int) {
	tf = make(map[string]int)
	tokenize(s, func(t string) {
		tf[t]++
		length++
	})
	return tf, length
}

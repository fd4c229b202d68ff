package webui

import (
	"strconv"
	"strings"
)

// The request headers Serve reads come from anyone: each is cut at
// maxHeaderItems items and never panics (FuzzHeaders).

const maxHeaderItems = 32

// acceptsGzip reports whether Accept-Encoding values allow gzip: "gzip" or
// "*" with a q-value above 0 (RFC 9110 §12.5.3), "identity" aside.
func acceptsGzip(values []string) bool {
	n := 0
	gzip, star := -1.0, -1.0
	for _, v := range values {
		for item := range strings.SplitSeq(v, ",") {
			if n++; n > maxHeaderItems {
				break
			}
			coding, params, _ := strings.Cut(item, ";")
			q := qValue(params)
			switch strings.ToLower(strings.TrimSpace(coding)) {
			case "gzip", "x-gzip":
				gzip = max(gzip, q)
			case "*":
				star = max(star, q)
			}
		}
	}
	if gzip >= 0 {
		return gzip > 0
	}
	return star > 0
}

// qValue reads "q=0.5" from a coding's parameters; 1 when absent, 0 when
// malformed (a coding the client mangled is not one to send it).
func qValue(params string) float64 {
	for p := range strings.SplitSeq(params, ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), "q") {
			continue
		}
		q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || q < 0 || q > 1 || len(v) > 8 {
			return 0
		}
		return q
	}
	return 1
}

// etagMatch reports whether If-None-Match values name one of tags, or are
// "*": weak comparison, as RFC 9110 §13.1.2 has it for If-None-Match.
func etagMatch(values []string, tags ...string) bool {
	n := 0
	for _, v := range values {
		for item := range strings.SplitSeq(v, ",") {
			if n++; n > maxHeaderItems {
				return false
			}
			item = strings.TrimPrefix(strings.TrimSpace(item), "W/")
			if item == "*" {
				return true
			}
			for _, t := range tags {
				if item == t {
					return true
				}
			}
		}
	}
	return false
}

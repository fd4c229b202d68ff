package agents

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/goccy/go-yaml"
)

// MaxLocalPolicy is the size an agent's policy.local.yaml may grow to by
// AddAllow: each allow_always adds a line, and a file that large is a
// sign of a loop approving everything.
const MaxLocalPolicy = 256 << 10

// LocalPolicies writes the agents' PolicyLocalFile, where allow_always
// answers are kept. A write reads the file, adds a line and replaces it:
// two at once on one file would each start from the same text and one
// rule would be lost, so a LocalPolicies makes its writes one at a time.
// The process has one (lite makes it and hands it to the runtime loop,
// the only writer), which is what makes that guarantee hold; writes are
// rare (a person answering "always"), so one lock for every file costs
// nothing and, unlike a lock per path, never grows. The zero value is
// ready; it must not be copied after first use.
type LocalPolicies struct {
	mu sync.Mutex
}

// AddAllow adds rule to the allow list of the agent in dir, in its
// PolicyLocalFile, and reports whether it was not there already. The file
// is replaced atomically (a temporary file, synced, renamed over it, the
// folder synced); its other keys, rules and comments are kept (when the
// allow list is written in a way it cannot extend line by line, the file
// is rewritten from its data, without its comments). It never sets a mode.
// A file that does not parse, that is a link out of the folder, or that
// would grow past MaxLocalPolicy is left alone, with an error.
func (p *LocalPolicies) AddAllow(dir, rule string) (bool, error) {
	if _, err := ParseRule(rule); err != nil {
		return false, err
	}
	file := filepath.Join(dir, PolicyLocalFile)
	p.mu.Lock()
	defer p.mu.Unlock()

	root, err := os.OpenRoot(dir)
	if err != nil {
		return false, fmt.Errorf("save an allow_always rule in agent folder %s: %w", dir, err)
	}
	defer root.Close()
	data, _, err := readInside(root, PolicyLocalFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		data = nil
	case errors.Is(err, ErrOutside):
		return false, &Error{File: file, Msg: "is a link that " + ErrOutside.Error() + outsideFix}
	case err != nil:
		return false, err
	}
	old, err := decodePolicyFile(file, data)
	if err != nil {
		return false, err
	}
	if slices.Contains(old.Allow, rule) {
		return false, nil
	}
	want := old
	want.Allow = append(slices.Clip(old.Allow), rule)
	out := insertAllow(data, strconv.Quote(rule))
	if got, err := decodePolicyFile(file, out); err != nil || !reflect.DeepEqual(got, want) {
		if out, err = remarshalAllow(data, want.Allow); err != nil {
			return false, &Error{File: file, Msg: "cannot be extended with an allow rule (" + err.Error() + "); add it by hand: " + rule}
		}
		if got, err := decodePolicyFile(file, out); err != nil || !reflect.DeepEqual(got, want) {
			return false, &Error{File: file, Msg: "cannot be extended with an allow rule; add it by hand: " + rule}
		}
	}
	if len(out) > MaxLocalPolicy {
		return false, &Error{File: file, Msg: fmt.Sprintf("would grow over %s with another allow_always rule; "+
			"merge its rules into patterns (bash:git *) and remove the rest", sizeText(MaxLocalPolicy))}
	}
	if err := WriteInside(root, PolicyLocalFile, out); err != nil {
		return false, fmt.Errorf("save an allow_always rule in %s: %w", file, err)
	}
	return true, nil
}

// decodePolicyFile parses one tier's text; nil is an empty file.
func decodePolicyFile(file string, data []byte) (policyFile, error) {
	var pf policyFile
	doc, err := ParseYAML(file, data)
	if err != nil {
		return pf, err
	}
	err = doc.Decode(&pf)
	return pf, err
}

// insertAllow adds the YAML scalar item to the top-level block list
// allow in text, after its last item, or adds the key at the end. A
// layout it does not follow (a flow list) gives text the caller's check
// rejects.
func insertAllow(text []byte, item string) []byte {
	lines := strings.SplitAfter(string(text), "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	key := -1
	for i, l := range lines {
		if rest, ok := strings.CutPrefix(l, "allow:"); ok {
			if r := strings.TrimSpace(rest); r != "" && !strings.HasPrefix(r, "#") {
				return nil // allow: [a, b] and the like
			}
			key = i
		}
	}
	if key < 0 {
		s := string(text)
		if s != "" && !strings.HasSuffix(s, "\n") {
			s += "\n"
		}
		return []byte(s + "allow:\n  - " + item + "\n")
	}
	indent, last := "  ", key
	itemIndent := -1
	for i := key + 1; i < len(lines); i++ {
		l := strings.TrimRight(lines[i], "\r\n")
		t := strings.TrimLeft(l, " ")
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		in := len(l) - len(t)
		if itemIndent < 0 {
			if !strings.HasPrefix(t, "-") {
				break // allow: with no items, then the next key
			}
			itemIndent, indent = in, l[:in]
		}
		if in < itemIndent || (in == itemIndent && !strings.HasPrefix(t, "-")) {
			break
		}
		last = i
	}
	if !strings.HasSuffix(lines[last], "\n") {
		lines[last] += "\n"
	}
	out := slices.Concat(lines[:last+1], []string{indent + "- " + item + "\n"}, lines[last+1:])
	return []byte(strings.Join(out, ""))
}

// remarshalAllow writes the tier anew from its data with allow set: the
// keys keep their order, the comments go.
func remarshalAllow(text []byte, allow []string) ([]byte, error) {
	var m yaml.MapSlice
	if err := yaml.Unmarshal(text, &m); err != nil {
		return nil, err
	}
	found := false
	for i := range m {
		if m[i].Key == "allow" {
			m[i].Value, found = allow, true
		}
	}
	if !found {
		m = append(m, yaml.MapItem{Key: "allow", Value: allow})
	}
	return yaml.Marshal(m)
}

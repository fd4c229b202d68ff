package agents

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// policyFile is policy.yaml.
type policyFile struct {
	APIVersion string       `yaml:"apiVersion"`
	Kind       string       `yaml:"kind"`
	Mode       string       `yaml:"mode"`
	Deny       []string     `yaml:"deny"`
	Allow      []string     `yaml:"allow"`
	Notify     notifyFile   `yaml:"notify"`
	Sessions   sessionsFile `yaml:"sessions"`
}

type notifyFile struct {
	Enabled    bool       `yaml:"enabled"`
	Patterns   []string   `yaml:"patterns"`
	Deliveries []Delivery `yaml:"deliveries"`
}

// LoadPolicy reads the policy tiers in order, most general first; missing
// files are skipped. No file at all gives mode dangerous with no rules.
// The files are read by their paths, symlinks followed: it is for the
// tiers the user's own config names. An agent's own tiers are read by
// LoadAgentPolicy.
func LoadPolicy(files ...string) (*Policy, error) {
	p := &Policy{Mode: "dangerous"}
	for _, f := range files {
		if err := p.load(f, func() ([]byte, error) { data, _, err := readFile(f); return data, err }); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// LoadAgentPolicy reads the policy of the agent in dir: general (the data
// dir's policy.yaml, which the user's config names; "" for none), then
// the agent's PolicyFile and PolicyLocalFile. The agent's tiers are read
// through an os.Root on its folder, as the files agent.yaml names are: an
// agent folder may be imported or edited by others, and a tier that is a
// symlink out of it (to another agent's policy, or a file whose text a
// parse error would quote) is refused.
func LoadAgentPolicy(general, dir string) (*Policy, error) {
	p, err := LoadPolicy()
	if general != "" {
		p, err = LoadPolicy(general)
	}
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("load the policy of agent folder %s: %w", dir, err)
	}
	defer root.Close()
	for _, name := range []string{PolicyFile, PolicyLocalFile} {
		file := filepath.Join(dir, name)
		err := p.load(file, func() ([]byte, error) { data, _, err := readInside(root, name); return data, err })
		if errors.Is(err, ErrOutside) {
			return nil, &Error{File: file, Msg: "is a link that " + ErrOutside.Error() + outsideFix}
		}
		if err != nil {
			return nil, err
		}
	}
	return p, nil
}

// load merges the tier file, read by read, into p; a missing file is
// skipped.
func (p *Policy) load(file string, read func() ([]byte, error)) error {
	data, err := read()
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := p.merge(file, data); err != nil {
		return err
	}
	p.Files = append(p.Files, file)
	return nil
}

func (p *Policy) merge(file string, data []byte) error {
	doc, err := ParseYAML(file, data)
	if err != nil {
		return err
	}
	var pf policyFile
	if err := doc.Decode(&pf); err != nil {
		return err
	}
	p.Warnings = append(p.Warnings, Warnings(doc)...)
	if pf.APIVersion != "" {
		if err := oneOf(doc, "apiVersion", pf.APIVersion, "agnx/v1alpha1", "duragent/v1alpha1"); err != nil {
			return err
		}
	}
	if pf.Kind != "" && pf.Kind != "Policy" {
		return doc.Errorf("kind", "kind must be Policy, not %q", pf.Kind)
	}
	if pf.Mode != "" {
		if err := oneOf(doc, "mode", pf.Mode, "dangerous", "ask", "restrict"); err != nil {
			return err
		}
		// As the parent merges: a more specific tier's dangerous does not
		// loosen a mode a more general one set.
		if pf.Mode == "dangerous" && p.modeSet && p.Mode != "dangerous" {
			p.Warnings = append(p.Warnings, doc.Errorf("mode", "mode dangerous does not loosen the mode %s of a more general policy file (ignored); change that file instead", p.Mode).Error())
		} else {
			p.Mode, p.modeSet = pf.Mode, true
		}
	}
	rules := func(key string, in []string, out *[]Rule) error {
		for i, s := range in {
			r, err := ParseRule(s)
			if err != nil {
				return doc.Errorf(key+"["+strconv.Itoa(i)+"]", "%s", err)
			}
			*out = append(*out, r)
		}
		return nil
	}
	if err := rules("deny", pf.Deny, &p.Deny); err != nil {
		return err
	}
	if err := rules("allow", pf.Allow, &p.Allow); err != nil {
		return err
	}
	if err := rules("notify.patterns", pf.Notify.Patterns, &p.Notify.Patterns); err != nil {
		return err
	}
	if err := p.mergeSessions(doc, pf.Sessions); err != nil {
		return err
	}
	p.Notify.Enabled = p.Notify.Enabled || pf.Notify.Enabled
	for i, d := range pf.Notify.Deliveries {
		key := "notify.deliveries[" + strconv.Itoa(i) + "]"
		if err := validateDelivery(doc, key, &d); err != nil {
			return err
		}
		if !slices.Contains(p.Notify.Deliveries, d) {
			p.Notify.Deliveries = append(p.Notify.Deliveries, d)
		}
	}
	return nil
}

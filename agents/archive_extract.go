package agents

import (
	"archive/tar"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// extractor unpacks one archive into tmp/agent (the agent's folder, through
// an os.Root) and tmp/sessions (the session streams).
type extractor struct {
	lim       Limits
	tmp       string
	agentsDir string
	force     bool

	root  *os.Root
	top   string // the archive's folder: the agent's name
	files int
	total int64

	manifest     *Manifest
	pending      map[string]bool // session streams the manifest lists, not yet read
	sessionFiles []string

	// Folder modes and times are set last (writing into a folder changes
	// its time); links are made last, so nothing is written through one.
	dirs  []dirMeta
	links []linkEntry
}

type dirMeta struct {
	rel  string
	perm fs.FileMode
	mod  time.Time
}

type linkEntry struct{ name, rel, target string }

func (x *extractor) rootDir() string { return filepath.Join(x.tmp, "agent") }

func (x *extractor) close() {
	if x.root != nil {
		x.root.Close()
		x.root = nil
	}
}

// start sets the agent's folder from the first entry. An existing agent is
// refused here already, before anything big is unpacked.
func (x *extractor) start(entry, name string) error {
	if !ValidName(name) {
		return refuse(entry, "is in the folder %q, which is not a valid agent name (letters, digits and hyphens): rename the folder and archive it again", name)
	}
	if _, err := os.Lstat(filepath.Join(x.agentsDir, name)); err == nil && !x.force {
		return &existsError{name, x.agentsDir}
	}
	if err := os.Mkdir(x.rootDir(), 0o700); err != nil {
		return fmt.Errorf("import: %w", err)
	}
	root, err := os.OpenRoot(x.rootDir())
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	x.top, x.root = name, root
	return nil
}

// entry unpacks one archive entry.
func (x *extractor) entry(h *tar.Header, body io.Reader) error {
	if h.Typeflag == tar.TypeXGlobalHeader {
		return nil // a pax global header (git archive writes one), not a file
	}
	rel, err := x.place(h.Name, h.Typeflag == tar.TypeDir)
	if err != nil {
		return err
	}
	x.files++
	if x.files > x.lim.MaxFiles {
		return refuse(h.Name, "is past the limit of %d entries%s", x.lim.MaxFiles, bigFix)
	}
	if rel == "" && h.Typeflag != tar.TypeDir {
		return refuse(h.Name, "is not a folder but stands where the agent's folder should"+unsafeFix)
	}
	switch h.Typeflag {
	case tar.TypeDir:
		return x.dir(h, rel)
	case tar.TypeReg:
		return x.file(h, rel, body)
	case tar.TypeSymlink:
		if linkLeaves(rel, h.Linkname) {
			return refuse(h.Name, "is a link to %q, outside the agent's folder%s", h.Linkname, unsafeFix)
		}
		x.links = append(x.links, linkEntry{h.Name, rel, h.Linkname})
		return nil
	case tar.TypeLink:
		return x.hardLink(h, rel)
	}
	return refuse(h.Name, "is a device, fifo or other special file, which an agent's folder cannot hold"+unsafeFix)
}

func (x *extractor) dir(h *tar.Header, rel string) error {
	if rel != "" {
		if err := x.root.MkdirAll(rel, 0o700); err != nil {
			return refuse(h.Name, "cannot be made a folder (%v)%s", err, unsafeFix)
		}
	} else {
		rel = "."
	}
	x.dirs = append(x.dirs, dirMeta{rel, fs.FileMode(h.Mode).Perm() | 0o700, h.ModTime})
	return nil
}

// mkParent makes the folders above rel.
func (x *extractor) mkParent(name, rel string) error {
	if d := path.Dir(rel); d != "." {
		if err := x.root.MkdirAll(d, 0o700); err != nil {
			return refuse(name, "cannot be unpacked (%v)%s", err, unsafeFix)
		}
	}
	return nil
}

// file unpacks a regular file: into the agent's folder, or, for the
// manifest and the session streams it lists, beside it.
func (x *extractor) file(h *tar.Header, rel string, body io.Reader) error {
	switch {
	case h.Size > x.lim.MaxFileSize:
		return refuse(h.Name, "is larger than %s, the limit for one file%s", sizeText(x.lim.MaxFileSize), bigFix)
	case h.Size > x.lim.MaxTotalSize-x.total:
		return refuse(h.Name, "takes the archive past %s unpacked, the limit%s", sizeText(x.lim.MaxTotalSize), bigFix)
	case rel == ManifestName:
		return x.readManifest(h, body)
	case x.pending[rel]:
		delete(x.pending, rel)
		return x.session(h, rel, body)
	}
	if err := x.mkParent(h.Name, rel); err != nil {
		return err
	}
	f, err := x.root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return refuse(h.Name, "appears twice in the archive"+unsafeFix)
	}
	if err != nil {
		return refuse(h.Name, "cannot be unpacked (%v)%s", err, unsafeFix)
	}
	err = x.copy(h.Name, f, body)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("import: %w", cerr)
	}
	if err != nil {
		return err
	}
	if err := x.root.Chmod(rel, fs.FileMode(h.Mode).Perm()|0o600); err != nil {
		return fmt.Errorf("import: %w", err)
	}
	return x.root.Chtimes(rel, h.ModTime, h.ModTime)
}

// copy writes an entry's content, counting what is really read against the
// limits rather than trusting the header.
func (x *extractor) copy(name string, w io.Writer, body io.Reader) error {
	left := min(x.lim.MaxFileSize, x.lim.MaxTotalSize-x.total)
	n, err := io.Copy(w, io.LimitReader(body, left+1))
	x.total += n
	switch {
	case n > left:
		return refuse(name, "is larger than the import limits (%s a file, %s in all)%s",
			sizeText(x.lim.MaxFileSize), sizeText(x.lim.MaxTotalSize), bigFix)
	case err != nil:
		return x.streamError(err)
	}
	return nil
}

// readManifest reads agnx-export.json and checks what it lists.
func (x *extractor) readManifest(h *tar.Header, body io.Reader) error {
	if x.manifest != nil {
		return refuse(h.Name, "appears twice in the archive"+unsafeFix)
	}
	if h.Size > 1<<20 {
		return refuse(h.Name, "is larger than 1 MiB, too big for a manifest"+unsafeFix)
	}
	var data strings.Builder
	if err := x.copy(h.Name, &data, body); err != nil {
		return err
	}
	var m Manifest
	if err := json.Unmarshal([]byte(data.String()), &m); err != nil {
		return refuse(h.Name, "is not a valid manifest (%v): export the agent again", err)
	}
	switch {
	case m.Format > ExportFormat:
		return refuse(h.Name, "says the archive has format %d, newer than this agnx-lite reads (%d): upgrade agnx-lite", m.Format, ExportFormat)
	case m.Agent != x.top:
		return refuse(h.Name, "names the agent %q, not the archive's folder %q"+unsafeFix, m.Agent, x.top)
	}
	x.pending = make(map[string]bool, len(m.Sessions))
	for _, s := range m.Sessions {
		id, ok := strings.CutPrefix(s, "sessions/")
		id, ok2 := strings.CutSuffix(id, ".jsonl")
		if !ok || !ok2 || !validSessionID(id) || x.pending[s] {
			return refuse(h.Name, "lists the session %q, which is not sessions/<id>.jsonl%s", s, unsafeFix)
		}
		x.pending[s] = true
	}
	x.manifest = &m
	return nil
}

// session writes a session stream to tmp/sessions.
func (x *extractor) session(h *tar.Header, rel string, body io.Reader) error {
	dir := filepath.Join(x.tmp, "sessions")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("import: %w", err)
	}
	name := filepath.Join(dir, path.Base(rel))
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	err = x.copy(h.Name, f, body)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("import: %w", cerr)
	}
	x.sessionFiles = append(x.sessionFiles, name)
	return err
}

// hardLink links rel to a regular file already unpacked. No symlink exists
// yet, so the target cannot be reached through one.
func (x *extractor) hardLink(h *tar.Header, rel string) error {
	target, err := x.linkTarget(h.Name, h.Linkname)
	if err != nil {
		return err
	}
	info, err := x.root.Lstat(target)
	if err != nil || !info.Mode().IsRegular() {
		return refuse(h.Name, "is a hard link to %q, which is not a file unpacked before it%s", h.Linkname, unsafeFix)
	}
	if err := x.mkParent(h.Name, rel); err != nil {
		return err
	}
	if err := x.root.Link(target, rel); err != nil {
		return refuse(h.Name, "cannot be unpacked (%v)%s", err, unsafeFix)
	}
	return nil
}

// finish makes the symlinks, checks that each resolves inside the folder,
// and sets the folders' modes and times.
func (x *extractor) finish() error {
	for s := range x.pending {
		return refuse(x.top+"/"+ManifestName, "lists the session %q, which the archive does not hold: export the agent again", s)
	}
	for _, l := range x.links {
		if err := x.mkParent(l.name, l.rel); err != nil {
			return err
		}
		if err := x.root.Symlink(l.target, l.rel); err != nil {
			return refuse(l.name, "cannot be unpacked (%v)%s", err, unsafeFix)
		}
	}
	for _, l := range x.links {
		// os.Root follows each link step by step and fails on any step
		// out of the folder, which the text check alone cannot see
		// (a link through another link's "..").
		if _, err := x.root.Stat(l.rel); err != nil {
			return refuse(l.name, "is a link to %q, which leads out of the agent's folder or to nothing%s", l.target, unsafeFix)
		}
	}
	for i := len(x.dirs) - 1; i >= 0; i-- {
		d := x.dirs[i]
		if err := x.root.Chmod(d.rel, d.perm); err != nil {
			return fmt.Errorf("import: %w", err)
		}
		if err := x.root.Chtimes(d.rel, d.mod, d.mod); err != nil {
			return fmt.Errorf("import: %w", err)
		}
	}
	return nil
}

// policy loads the unpacked agent's own policy tiers, as the daemon will
// (without the data dir's, which is the operator's, not the archive's).
func (x *extractor) policy() (*Policy, error) {
	p, err := LoadAgentPolicy("", x.rootDir())
	if err != nil {
		return nil, fmt.Errorf("import: the agent's policy is invalid: %s", strings.ReplaceAll(err.Error(), x.rootDir(), x.top))
	}
	return p, nil
}

// validate loads the unpacked agent; an error names the file as it is in
// the archive.
func (x *extractor) validate() (*Agent, error) {
	dir := x.rootDir()
	a, err := Load(dir)
	if err == nil {
		return a, nil
	}
	var e *Error
	if errors.As(err, &e) {
		c := *e
		if rel, rerr := filepath.Rel(dir, c.File); rerr == nil && !strings.HasPrefix(rel, "..") {
			c.File = x.top + "/" + filepath.ToSlash(rel)
		}
		return nil, fmt.Errorf("import: the agent is invalid: %w", &c)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("import: the archive's folder %q has no %s: it is not an agent", x.top, FileName)
	}
	return nil, fmt.Errorf("import: the agent is invalid: %s", strings.ReplaceAll(err.Error(), dir, x.top))
}

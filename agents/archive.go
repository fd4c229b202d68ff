package agents

import (
	"archive/tar"
	"compress/gzip"
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

// ManifestName is the file that says what an export archive holds. It is
// the archive's first file, inside the agent's top-level folder, and is not
// part of the agent: Import reads it and does not write it.
const ManifestName = "agnx-export.json"

// ExportFormat is the manifest format version Export writes and the newest
// Import reads.
const ExportFormat = 1

// Limits bound an archive, on export and on import. Zero fields mean the
// defaults: 10,000 entries, 64 MiB a file, 256 MiB in all. Import counts
// the bytes it actually decompresses and never trusts a header's sizes.
type Limits struct {
	MaxFiles     int
	MaxFileSize  int64
	MaxTotalSize int64
}

func (l Limits) withDefaults() Limits {
	if l.MaxFiles <= 0 {
		l.MaxFiles = 10_000
	}
	if l.MaxFileSize <= 0 {
		l.MaxFileSize = 64 << 20
	}
	if l.MaxTotalSize <= 0 {
		l.MaxTotalSize = 256 << 20
	}
	return l
}

// sizeText writes a limit for people: "64 MiB", "1 KiB", "300 bytes".
func sizeText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Manifest is agnx-export.json.
type Manifest struct {
	Format  int       `json:"format"`
	Agent   string    `json:"agent"`
	Version string    `json:"agnx_lite_version"`
	Created time.Time `json:"created"`
	// Sessions are the session streams in the archive, relative to the
	// agent's folder: sessions/<id>.jsonl.
	Sessions []string `json:"sessions"`
}

// SessionFile is one session's events.jsonl to put in an archive. The
// caller provides it so that agents stays independent of runtime.
type SessionFile struct {
	// ID is the session's id: letters, digits, hyphens and underscores.
	ID string
	// Size is the exact length of what Open returns.
	Size int64
	Open func() (io.ReadCloser, error)
}

// ExportOptions tune Export.
type ExportOptions struct {
	// Version is the agnx-lite version written into the manifest.
	Version  string
	Sessions []SessionFile
	Limits   Limits
	// Warn is told of each file left out (sockets, devices, fifos); nil
	// drops the warnings.
	Warn func(msg string)
	// Now stamps the manifest; nil means time.Now.
	Now func() time.Time
}

// sessionPath is where a session's stream sits in an archive, relative to
// the agent's folder.
func sessionPath(id string) string { return "sessions/" + id + ".jsonl" }

// validSessionID keeps session ids safe as file names.
func validSessionID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for _, r := range id {
		if !(r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// Export writes the agent in agentDir to w as a gzip'd tar whose single
// top-level folder is the agent's folder name: first agnx-export.json, then
// the folder's directories, regular files and symlinks in lexical order
// with their modes and modification times, then the session streams under
// sessions/<id>.jsonl. The agent must load without error, so that what is
// exported can be imported.
//
// Sockets, devices and fifos are left out with a warning. A symlink is kept
// as a symlink when it stays inside the folder; one that points out of it
// (or to nothing) makes Export fail with a sentence naming it, as an
// archive that silently lacks what a link points to would surprise the
// user only once the original is gone.
func Export(w io.Writer, agentDir string, opts ExportOptions) error {
	name := filepath.Base(agentDir)
	if !ValidName(name) {
		return fmt.Errorf("export: %q is not a valid agent name: use letters, digits and hyphens", name)
	}
	if _, err := Load(agentDir); err != nil {
		return err
	}
	real, err := filepath.EvalSymlinks(agentDir)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	lim := opts.Limits.withDefaults()
	entries, total, err := walkAgent(real, name, lim, opts.Warn)
	if err != nil {
		return err
	}
	m := Manifest{Format: ExportFormat, Agent: name, Version: opts.Version, Created: time.Now().UTC(), Sessions: []string{}}
	if opts.Now != nil {
		m.Created = opts.Now().UTC()
	}
	if err := checkSessions(entries, total, opts.Sessions, &m, lim); err != nil {
		return err
	}
	return writeArchive(w, real, name, &m, entries, opts.Sessions)
}

// entry is one file of the agent's folder, relative to it ("" is the
// folder itself).
type entry struct {
	rel  string
	info fs.FileInfo
	link string
}

// walkAgent lists the agent's folder in lexical order and checks it
// against the limits and the symlink rule.
func walkAgent(dir, name string, lim Limits, warn func(string)) (_ []entry, total int64, _ error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, 0, fmt.Errorf("export: %w", err)
	}
	defer root.Close()
	var out []entry
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			rel = ""
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		e := entry{rel: rel, info: info}
		switch mode := info.Mode(); {
		case rel == ManifestName:
			return exportError(name, rel, "has the name export archives keep for their manifest; rename it")
		case mode&fs.ModeSymlink != 0:
			if e.link, err = os.Readlink(p); err != nil {
				return err
			}
			if _, err := root.Stat(rel); err != nil || linkLeaves(rel, e.link) {
				return exportError(name, rel, "is a link to "+e.link+", outside the folder (or to nothing); replace it with a copy of what it points to")
			}
		case mode.IsRegular():
			if info.Size() > lim.MaxFileSize {
				return exportError(name, rel, fmt.Sprintf("is larger than %s; keep big data out of the agent's folder", sizeText(lim.MaxFileSize)))
			}
			total += info.Size()
		case !mode.IsDir():
			if warn != nil {
				warn(fmt.Sprintf("export: left out %s/%s: it is not a regular file, folder or link", name, rel))
			}
			return nil
		}
		out = append(out, e)
		if len(out) > lim.MaxFiles || total > lim.MaxTotalSize {
			return exportError(name, rel, fmt.Sprintf("is past the limit of %d files or %s; keep big data out of the agent's folder",
				lim.MaxFiles, sizeText(lim.MaxTotalSize)))
		}
		return nil
	})
	if err != nil {
		var fe *fileError
		if errors.As(err, &fe) {
			return nil, 0, err
		}
		return nil, 0, fmt.Errorf("export %s: %w", name, err)
	}
	return out, total, nil
}

// fileError is a refusal naming one file of an agent's folder or archive.
type fileError struct{ msg string }

func (e *fileError) Error() string { return e.msg }

func exportError(name, rel, what string) error {
	return &fileError{fmt.Sprintf("export: %s/%s %s", name, rel, what)}
}

// linkLeaves reports whether a symlink at rel (slash-separated, relative to
// the folder) whose target is target points out of the folder, judging by
// its text alone.
func linkLeaves(rel, target string) bool {
	if target == "" || path.IsAbs(target) || filepath.IsAbs(target) {
		return true
	}
	p := path.Join(path.Dir(rel), target)
	return p == ".." || strings.HasPrefix(p, "../")
}

// checkSessions refuses bad session ids and names that clash with the
// agent's own files, and lists the sessions in the manifest.
func checkSessions(entries []entry, total int64, sessions []SessionFile, m *Manifest, lim Limits) error {
	have := make(map[string]bool, len(entries))
	for _, e := range entries {
		have[e.rel] = true
	}
	for _, s := range sessions {
		p := sessionPath(s.ID)
		switch {
		case !validSessionID(s.ID):
			return fmt.Errorf("export: session id %q cannot be a file name", s.ID)
		case have[p]:
			return exportError(m.Agent, p, "clashes with an exported session of the same id; move the file")
		case s.Size > lim.MaxFileSize:
			return fmt.Errorf("export: session %s is larger than %s, more than an import accepts", s.ID, sizeText(lim.MaxFileSize))
		}
		have[p] = true
		m.Sessions = append(m.Sessions, p)
		total += s.Size
	}
	if len(entries)+1+len(sessions) > lim.MaxFiles || total > lim.MaxTotalSize {
		return fmt.Errorf("export: %s with its sessions is past the limit of %d files or %s an import accepts; export it without sessions",
			m.Agent, lim.MaxFiles, sizeText(lim.MaxTotalSize))
	}
	return nil
}

// writeArchive writes the manifest, the entries and the sessions.
func writeArchive(w io.Writer, dir, name string, m *Manifest, entries []entry, sessions []SessionFile) error {
	gz := gzip.NewWriter(w) // no name or time in the gzip header: the output depends on the files only
	tw := tar.NewWriter(gz)
	man, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	man = append(man, '\n')
	top := entries[0] // the folder itself
	if err := writeDir(tw, name+"/", top.info); err != nil {
		return err
	}
	hdr := &tar.Header{Typeflag: tar.TypeReg, Name: name + "/" + ManifestName, Mode: 0o644,
		Size: int64(len(man)), ModTime: m.Created, Format: tar.FormatPAX}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	if _, err := tw.Write(man); err != nil {
		return err
	}
	for _, e := range entries[1:] {
		if err := writeEntry(tw, dir, name, e); err != nil {
			return fmt.Errorf("export %s/%s: %w", name, e.rel, err)
		}
	}
	for _, s := range sessions {
		if err := writeSession(tw, name, s, m.Created); err != nil {
			return fmt.Errorf("export session %s: %w", s.ID, err)
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

func writeDir(tw *tar.Writer, name string, info fs.FileInfo) error {
	return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: int64(info.Mode().Perm()),
		ModTime: info.ModTime(), Format: tar.FormatPAX})
}

func writeEntry(tw *tar.Writer, dir, name string, e entry) error {
	arch := name + "/" + e.rel
	mode := e.info.Mode()
	switch {
	case mode.IsDir():
		return writeDir(tw, arch+"/", e.info)
	case mode&fs.ModeSymlink != 0:
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: arch, Linkname: e.link,
			Mode: 0o777, ModTime: e.info.ModTime(), Format: tar.FormatPAX})
	}
	f, err := os.Open(filepath.Join(dir, filepath.FromSlash(e.rel)))
	if err != nil {
		return err
	}
	defer f.Close()
	hdr := &tar.Header{Typeflag: tar.TypeReg, Name: arch, Mode: int64(mode.Perm()), Size: e.info.Size(),
		ModTime: e.info.ModTime(), Format: tar.FormatPAX}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	if _, err := io.CopyN(tw, f, hdr.Size); err != nil {
		return fmt.Errorf("the file changed while it was exported (%w): try again", err)
	}
	return nil
}

func writeSession(tw *tar.Writer, name string, s SessionFile, mod time.Time) error {
	r, err := s.Open()
	if err != nil {
		return err
	}
	defer r.Close()
	hdr := &tar.Header{Typeflag: tar.TypeReg, Name: name + "/" + sessionPath(s.ID), Mode: 0o600,
		Size: s.Size, ModTime: mod, Format: tar.FormatPAX}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	_, err = io.CopyN(tw, r, s.Size)
	return err
}

package agents

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ImportOptions tune Import.
type ImportOptions struct {
	// Force replaces an agent of the same name: the old folder is renamed
	// aside, the new one renamed into place, then the old one removed.
	Force bool
	// Trust installs an agent whose Reach has risks (a provider key sent
	// to a foreign server, executables, network access); without it
	// Import refuses such an agent with an *UntrustedError.
	Trust  bool
	Limits Limits
}

// ImportResult is what Import did.
type ImportResult struct {
	Name     string
	Dir      string
	Replaced bool
	// Reach is what the installed agent will reach, for the caller to
	// show.
	Reach Reach
	// Manifest is the archive's agnx-export.json; nil when it has none (a
	// folder archived by hand).
	Manifest *Manifest
	// Sessions are files holding the archive's session streams
	// (events.jsonl), in archive order, for the caller to import; they
	// last until Close.
	Sessions []string
	tmp      string
}

// Close removes the session files.
func (r *ImportResult) Close() error {
	if r.tmp == "" {
		return nil
	}
	err := os.RemoveAll(r.tmp)
	r.tmp = ""
	return err
}

// ErrAgentExists is matched (errors.Is) by Import's error for an agent
// that exists when Force is not set.
var ErrAgentExists = errors.New("agent already exists")

type existsError struct{ name, dir string }

func (e *existsError) Error() string {
	return fmt.Sprintf("import: agent %q already exists in %s: import with --force to replace it", e.name, e.dir)
}

func (e *existsError) Is(target error) bool { return target == ErrAgentExists }

// ArchiveError is an archive entry Import refuses. Its text is one
// sentence naming the entry, what is wrong and what to do.
type ArchiveError struct {
	Entry string
	Msg   string
}

func (e *ArchiveError) Error() string {
	return fmt.Sprintf("import: archive entry %q %s", e.Entry, e.Msg)
}

const (
	unsafeFix = "; refusing the archive: import only archives made by \"agnx-lite agent export\""
	bigFix    = "; keep big data out of agent folders and export again"
)

func refuse(entry, format string, args ...any) error {
	return &ArchiveError{Entry: entry, Msg: fmt.Sprintf(format, args...)}
}

// Import unpacks a gzip'd tar made by Export into agentsDir. It unpacks
// into a temporary folder inside agentsDir, checks every entry as it goes,
// loads the result as an agent, and only then renames it into place, so a
// refused or broken archive leaves nothing behind. An agent whose [Reach]
// has risks is refused with an [*UntrustedError] unless Trust is set: an
// archive is someone else's code and prompts, and what it would run or
// whom it would send keys and conversations to is the user's call.
//
// It refuses absolute paths, ".." segments, entries outside the single
// top-level folder, symlinks and hard links that lead out of the folder
// (judged by their text and again, once every link exists, by resolving
// them inside an [os.Root]), devices, fifos and other special files, more
// than Limits.MaxFiles entries, a file over Limits.MaxFileSize and more
// than Limits.MaxTotalSize in all. Sizes are counted on the bytes actually
// decompressed, so a gzip bomb is cut off early. The folder's name must be
// a valid agent name; an existing agent is an [ErrAgentExists] error unless
// Force is set. Symlinks are created only after every file is written, so
// no entry is ever written through a link.
//
// Session streams the manifest lists are not written into the agent's
// folder: they are returned in ImportResult.Sessions; call Close when done.
func Import(r io.Reader, agentsDir string, opts ImportOptions) (res ImportResult, err error) {
	if err := os.MkdirAll(agentsDir, 0o755); err != nil {
		return res, fmt.Errorf("import: %w", err)
	}
	tmp, err := os.MkdirTemp(agentsDir, ".import-")
	if err != nil {
		return res, fmt.Errorf("import: %w", err)
	}
	x := &extractor{lim: opts.Limits.withDefaults(), tmp: tmp, agentsDir: agentsDir, force: opts.Force}
	defer func() {
		x.close()
		if err != nil {
			os.RemoveAll(tmp)
			res = ImportResult{}
		}
	}()
	if err := x.read(r); err != nil {
		return res, err
	}
	if err := x.finish(); err != nil {
		return res, err
	}
	x.close()
	dest := filepath.Join(agentsDir, x.top)
	a, err := x.validate()
	if err != nil {
		return res, err
	}
	reach := a.Reach()
	pol, err := x.policy()
	if err != nil {
		return res, err
	}
	reach.AddPolicy(pol)
	if len(reach.Risks) > 0 && !opts.Trust {
		return res, &UntrustedError{Name: x.top, Reach: reach}
	}
	replaced, err := install(x.rootDir(), dest, tmp, opts.Force)
	if err != nil {
		return res, err
	}
	res = ImportResult{Name: x.top, Dir: dest, Replaced: replaced, Reach: reach, Manifest: x.manifest,
		Sessions: x.sessionFiles, tmp: tmp}
	if len(res.Sessions) == 0 {
		return res, res.Close()
	}
	return res, nil
}

// install renames the unpacked folder into place, moving an existing one
// aside first when force is set (and back again if the rename fails).
func install(src, dest, tmp string, force bool) (replaced bool, err error) {
	_, err = os.Lstat(dest)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.Rename(src, dest); err != nil {
			return false, fmt.Errorf("import: %w", err)
		}
		return false, nil
	case err != nil:
		return false, fmt.Errorf("import: %w", err)
	case !force:
		return false, &existsError{filepath.Base(dest), filepath.Dir(dest)}
	}
	aside := filepath.Join(tmp, "old")
	if err := os.Rename(dest, aside); err != nil {
		return false, fmt.Errorf("import: moving the old %s aside: %w", dest, err)
	}
	if err := os.Rename(src, dest); err != nil {
		if rerr := os.Rename(aside, dest); rerr != nil {
			return false, fmt.Errorf("import: %w; the old agent is left in %s", err, aside)
		}
		return false, fmt.Errorf("import: %w", err)
	}
	if err := os.RemoveAll(aside); err != nil {
		return true, fmt.Errorf("import: removing the old agent: %w", err)
	}
	return true, nil
}

// capReader fails once more than left bytes were read: Import's bound on
// the decompressed stream, headers and skipped data included.
type capReader struct {
	r    io.Reader
	left int64
}

var errUnpackedTooBig = errors.New("the archive unpacks to more than the limit")

func (c *capReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, errUnpackedTooBig
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// read unpacks every entry of the archive.
func (x *extractor) read(r io.Reader) error {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return errors.New("import: the file is not a gzip'd tar archive: make one with \"agnx-lite agent export NAME > NAME.tar.gz\"")
	}
	defer gz.Close()
	// Room for the headers of MaxFiles entries on top of their contents.
	limit := x.lim.MaxTotalSize + int64(x.lim.MaxFiles)*4096 + 1<<20
	tr := tar.NewReader(&capReader{r: gz, left: limit})
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return x.streamError(err)
		}
		if err := x.entry(h, tr); err != nil {
			return err
		}
	}
	if x.top == "" {
		return errors.New("import: the archive holds no agent folder: make one with \"agnx-lite agent export NAME > NAME.tar.gz\"")
	}
	return nil
}

// streamError turns an error reading the archive into a sentence.
func (x *extractor) streamError(err error) error {
	if errors.Is(err, errUnpackedTooBig) {
		return fmt.Errorf("import: the archive unpacks to more than %s%s", sizeText(x.lim.MaxTotalSize), bigFix)
	}
	return fmt.Errorf("import: the archive is damaged (%v): export the agent again", err)
}

// splitName cleans an entry's name into its segments, refusing absolute
// paths and "..".
func splitName(name string) ([]string, error) {
	if strings.HasPrefix(name, "/") || filepath.IsAbs(name) {
		return nil, refuse(name, "has an absolute path"+unsafeFix)
	}
	var parts []string
	for _, s := range strings.Split(name, "/") {
		switch s {
		case "", ".":
			continue
		case "..":
			return nil, refuse(name, "leads out of the folder with \"..\""+unsafeFix)
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return nil, refuse(name, "names no file"+unsafeFix)
	}
	return parts, nil
}

// place checks an entry's name and returns its path inside the agent's
// folder ("" for the folder itself). The first entry sets the folder.
func (x *extractor) place(name string, isDir bool) (string, error) {
	parts, err := splitName(name)
	if err != nil {
		return "", err
	}
	top := parts[0]
	switch {
	case len(parts) == 1 && !isDir:
		return "", refuse(name, "is not inside a folder; the archive must hold one folder named after the agent: make it with \"agnx-lite agent export\"")
	case x.top == "":
		if err := x.start(name, top); err != nil {
			return "", err
		}
	case top != x.top:
		return "", refuse(name, "is outside the archive's single folder %q; an archive holds one agent%s", x.top, unsafeFix)
	}
	return strings.Join(parts[1:], "/"), nil
}

// linkTarget resolves a hard link's target to a path inside the folder.
func (x *extractor) linkTarget(name, target string) (string, error) {
	parts, err := splitName(target)
	if err != nil || parts[0] != x.top || len(parts) == 1 {
		return "", refuse(name, "is a hard link to %q, outside the agent's folder%s", target, unsafeFix)
	}
	return strings.Join(parts[1:], "/"), nil
}

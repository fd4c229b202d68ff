package agents

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Every file agent.yaml names (prompt parts, a CLI tool's command and
// readme, a WASM tool's manifest) must lie inside the agent's folder: the
// prompt goes to the model server the agent's base_url names, so an
// imported or edited agent that could name /etc/shadow or the data dir's
// agnx.env would ship them there. Two checks keep it in: the text of each
// reference must be a local path (relative, never climbing out with "..";
// see [filepath.IsLocal]), and every such file is opened through an
// [os.Root] on the folder, which refuses a symlink out at open time. A
// symlink that stays inside is followed.

// ErrOutside is matched (errors.Is) by the error for a file an agent names
// that is, or leads through a symlink, outside the agent's folder.
var ErrOutside = errors.New("leads outside the agent's folder")

// outsideFix completes a sentence about a reference that leads out.
const outsideFix = ": an agent may use only files inside its own folder; copy the file into it and name it by a relative path"

// ErrNotRegular is matched (errors.Is) by the error for a file an agent
// names that is a named pipe, a device or a socket: opening a FIFO to read
// it would block the daemon's start or reload until something writes to
// it.
var ErrNotRegular = errors.New("is a named pipe, device or socket, not a regular file")

// ErrTooLarge is matched (errors.Is) by the error for a file an agent
// names that is larger than 1 MiB: agent.yaml and the prompt files are
// read whole into memory, on small machines.
var ErrTooLarge = errors.New("is larger than 1 MiB, the most an agent's file may be")

// tooLargeFix completes a sentence about a file that is too large.
const tooLargeFix = ": shorten it; long texts belong in prompt files, skills or the agent's memory folder"

// notRegularFix completes a sentence about a file that is not regular.
const notRegularFix = ": an agent's files must be regular files; replace it with one"

// openInside opens rel, a path relative to root, following symlinks only
// while they stay inside. A path or link that leads out is an error
// matching ErrOutside; a missing file one matching fs.ErrNotExist; a file
// that is neither regular nor a folder one matching ErrNotRegular. The
// open never blocks (O_NONBLOCK returns at once for a FIFO) and the type
// is checked on the opened descriptor, so a file swapped for a FIFO
// between a look and the open cannot slip through.
func openInside(root *os.Root, rel string) (*os.File, error) {
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if errors.Is(err, syscall.ENXIO) || errors.Is(err, syscall.ENODEV) {
		return nil, &fs.PathError{Op: "open", Path: rel, Err: ErrNotRegular} // a socket
	}
	if err == nil {
		return regularOrDir(f, rel)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	// os.Root's "path escapes from parent" is not exported: tell it from
	// other failures (permissions) by looking at the entry itself.
	if st, lerr := root.Lstat(rel); lerr == nil && st.Mode()&fs.ModeSymlink == 0 {
		return nil, err
	}
	return nil, &fs.PathError{Op: "open", Path: rel, Err: ErrOutside}
}

// regularOrDir returns f if it is a regular file or a folder, and closes
// it otherwise.
func regularOrDir(f *os.File, rel string) (*os.File, error) {
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() && !st.IsDir() {
		err = &fs.PathError{Op: "open", Path: rel, Err: ErrNotRegular}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// readInside reads rel, a regular file of at most maxFileSize bytes inside
// root.
func readInside(root *os.Root, rel string) ([]byte, time.Time, error) {
	f, err := openInside(root, rel)
	if err != nil {
		return nil, time.Time{}, err
	}
	defer f.Close()
	return readOpen(f, rel)
}

// ReadFile reads name, a file of the agent's own (a path relative to Dir,
// or under it), through an os.Root on Dir: a path or symlink that leads
// out of the folder is refused with an error matching ErrOutside. Files
// over 1 MiB are refused too.
func (a *Agent) ReadFile(name string) ([]byte, error) {
	root, rel, err := a.open(name)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	data, _, err := readInside(root, rel)
	return data, err
}

// StatFile is os.Stat for a file of the agent's own, with ReadFile's
// confinement: what it describes is the file a symlink inside the folder
// leads to, never one outside.
func (a *Agent) StatFile(name string) (fs.FileInfo, error) {
	root, rel, err := a.open(name)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	f, err := openInside(root, rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Stat()
}

// open opens the root on Dir and makes name relative to it.
func (a *Agent) open(name string) (*os.Root, string, error) {
	rel := name
	if filepath.IsAbs(name) {
		r, err := filepath.Rel(a.Dir, name)
		if err != nil || !filepath.IsLocal(r) {
			return nil, "", &fs.PathError{Op: "open", Path: name, Err: ErrOutside}
		}
		rel = r
	}
	if !filepath.IsLocal(rel) {
		return nil, "", &fs.PathError{Op: "open", Path: name, Err: ErrOutside}
	}
	root, err := os.OpenRoot(a.Dir)
	if err != nil {
		return nil, "", err
	}
	return root, rel, nil
}

// localRef refuses a reference in agent.yaml that is not a local path.
func localRef(doc *Doc, path, v string) error {
	if v == "" || filepath.IsLocal(v) {
		return nil
	}
	return doc.Errorf(path, "%s %q %s%s", path, v, ErrOutside, outsideFix)
}

// fileRef is one file reference in agent.yaml: its path there and its value.
type fileRef struct{ path, v string }

// toolRefs are the files tool i names: its readme and path, and its
// command when it is a CLI tool given by a relative path (for another type
// the command is not a file; an absolute command is the operator's
// choice, run in the sandbox, as Agnx allows; a command line with
// arguments is checked by the tool factory).
func toolRefs(i int, t ToolRef) []fileRef {
	p := "spec.tools[" + strconv.Itoa(i) + "]"
	refs := []fileRef{{p + ".readme", t.Readme}, {p + ".path", t.Path}}
	if t.Type == "cli" && !filepath.IsAbs(t.Command) && !strings.ContainsAny(t.Command, " \t'\"") {
		refs = append(refs, fileRef{p + ".command", t.Command})
	}
	return refs
}

// localRefs checks the text of every file reference in the spec.
func localRefs(doc *Doc, s *spec) error {
	refs := []fileRef{
		{"spec.soul", s.Soul}, {"spec.system_prompt", s.SystemPrompt},
		{"spec.instructions", s.Instructions}, {"spec.skills_dir", s.SkillsDir},
	}
	for i, t := range s.Tools {
		refs = append(refs, toolRefs(i, t)...)
	}
	for _, r := range refs {
		if err := localRef(doc, r.path, r.v); err != nil {
			return err
		}
	}
	return nil
}

// checkToolFiles opens, through the root, the files the tools name, so
// that one that is a symlink out of the folder is refused at load time
// with its line. A missing file, or one that is not regular, is left to
// the code that builds the tool, which says what to do about it.
func checkToolFiles(root *os.Root, doc *Doc, tools []ToolRef) error {
	for i, t := range tools {
		for _, r := range toolRefs(i, t) {
			if r.v == "" {
				continue
			}
			f, err := openInside(root, r.v)
			if errors.Is(err, ErrOutside) {
				return doc.Errorf(r.path, "%s %q is a link that %s%s", r.path, r.v, ErrOutside, outsideFix)
			}
			if f != nil {
				f.Close()
			}
		}
	}
	return nil
}

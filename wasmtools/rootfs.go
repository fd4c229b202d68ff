package wasmtools

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"
	"time"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/sys"
)

// rootFS is the workspace as a tool sees it at /workspace: wazero's file
// system interface over an os.Root, so that every path a tool names is
// resolved beneath the workspace by the kernel, one component at a time.
//
// wazero's own directory mount joins paths to the host folder and lets
// the kernel follow any symlink, so a link planted by the bash tool
// (ln -s /etc/shadow x, or ../../agnx.env) took a tool anywhere on the
// host. os.Root follows a symlink only when it is relative and stays
// inside, treats ".." the same way, and walks each component with
// O_NOFOLLOW from the descriptor of its parent, so swapping a folder for
// a link between a check and an open cannot lead outside either. Links
// that stay inside still work: tools built by npm, pip or uv rely on them.
//
// Beyond what os.Root gives:
//   - A read-only mount refuses every open that could write (O_CREAT,
//     O_TRUNC and O_APPEND included, which wazero's own read-only mount
//     lets through with O_RDONLY) and every change, with EROFS.
//   - A regular file with more than one link is never opened for writing,
//     nor are its mode or times changed: a hard link may name a file
//     outside the workspace. (Reads are allowed: the sandbox cannot make
//     such a link, as a link across its bind mounts fails with EXDEV, and
//     package managers fill workspaces with hard links inside them.)
//   - Only regular files and folders are opened, and opens never block:
//     a FIFO planted in the workspace cannot hang the call.
//   - A tool cannot create a symlink that is absolute or climbs out of the
//     workspace, which the bash tool or a host tool could follow later.
type rootFS struct {
	experimentalsys.UnimplementedFS
	root     *os.Root
	readOnly bool
}

var _ experimentalsys.FS = (*rootFS)(nil)

// openRootFS opens dir for one call; the caller closes fs.root after it.
func openRootFS(dir string, readOnly bool) (*rootFS, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &rootFS{root: root, readOnly: readOnly}, nil
}

// rel turns wazero's path (already cleaned, relative to the mount, maybe
// with a trailing slash) into a name for os.Root.
func rel(name string) string {
	if name == "" || name == "/" {
		return "."
	}
	return name
}

// writeFlags are the open flags that can change a file.
const writeFlags = experimentalsys.O_WRONLY | experimentalsys.O_RDWR | experimentalsys.O_CREAT |
	experimentalsys.O_TRUNC | experimentalsys.O_APPEND

func (r *rootFS) OpenFile(name string, flag experimentalsys.Oflag, perm fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	name = rel(name)
	writes := flag&writeFlags != 0
	if r.readOnly && writes {
		return nil, experimentalsys.EROFS
	}
	if flag&experimentalsys.O_NOFOLLOW != 0 {
		// os.Root follows a last component that links inside; the guest
		// asked not to. A race here can only lead to a link inside.
		if fi, err := r.root.Lstat(name); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, experimentalsys.ELOOP
		}
	}
	// O_TRUNC waits until the link count has been checked; O_NONBLOCK
	// keeps a FIFO from blocking the open.
	osFlag := osOpenFlag(flag)&^os.O_TRUNC | syscall.O_NONBLOCK
	f, err := r.root.OpenFile(name, osFlag, perm&fs.ModePerm)
	if err != nil {
		return nil, toErrno(err)
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, toErrno(err)
	}
	st := sys.NewStat_t(fi)
	errno := checkOpened(fi.Mode(), st.Nlink, flag)
	if errno == 0 && flag&experimentalsys.O_TRUNC != 0 && fi.Mode().IsRegular() {
		errno = toErrno(f.Truncate(0))
	}
	if errno != 0 {
		_ = f.Close()
		return nil, errno
	}
	rf := &rootFile{fs: r, name: name, flag: osFlag &^ (os.O_CREATE | os.O_EXCL), file: f,
		dev: st.Dev, ino: st.Ino, isDir: fi.IsDir()}
	rf.seeker.f = rf
	return rf, 0
}

// checkOpened refuses what OpenFile must not hand out, once the file is
// open and cannot change under it: anything but a regular file or a
// folder, a folder where a file was wanted or the reverse, and a file
// with other links opened to write.
func checkOpened(mode fs.FileMode, nlink uint64, flag experimentalsys.Oflag) experimentalsys.Errno {
	switch {
	case mode.IsDir():
		if flag&(experimentalsys.O_WRONLY|experimentalsys.O_RDWR|experimentalsys.O_TRUNC|experimentalsys.O_APPEND) != 0 {
			return experimentalsys.EISDIR
		}
	case !mode.IsRegular():
		return experimentalsys.ENOTSUP
	case flag&experimentalsys.O_DIRECTORY != 0:
		return experimentalsys.ENOTDIR
	case flag&writeFlags != 0 && nlink > 1:
		return experimentalsys.EPERM
	}
	return 0
}

// osOpenFlag maps wazero's open flags to the os package's. O_DIRECTORY
// and O_NOFOLLOW are checked by OpenFile itself.
func osOpenFlag(flag experimentalsys.Oflag) int {
	var f int
	switch {
	case flag&experimentalsys.O_RDWR != 0:
		f = os.O_RDWR
	case flag&experimentalsys.O_WRONLY != 0:
		f = os.O_WRONLY
	default:
		f = os.O_RDONLY
	}
	for _, m := range []struct {
		sys experimentalsys.Oflag
		os  int
	}{
		{experimentalsys.O_APPEND, os.O_APPEND}, {experimentalsys.O_CREAT, os.O_CREATE},
		{experimentalsys.O_EXCL, os.O_EXCL}, {experimentalsys.O_TRUNC, os.O_TRUNC},
		{experimentalsys.O_SYNC | experimentalsys.O_DSYNC | experimentalsys.O_RSYNC, os.O_SYNC},
	} {
		if flag&m.sys != 0 {
			f |= m.os
		}
	}
	return f
}

func (r *rootFS) Lstat(name string) (sys.Stat_t, experimentalsys.Errno) {
	return stat(r.root.Lstat(rel(name)))
}

func (r *rootFS) Stat(name string) (sys.Stat_t, experimentalsys.Errno) {
	return stat(r.root.Stat(rel(name)))
}

func stat(fi fs.FileInfo, err error) (sys.Stat_t, experimentalsys.Errno) {
	if err != nil {
		return sys.Stat_t{}, toErrno(err)
	}
	return sys.NewStat_t(fi), 0
}

func (r *rootFS) Mkdir(name string, perm fs.FileMode) experimentalsys.Errno {
	if r.readOnly {
		return experimentalsys.EROFS
	}
	errno := toErrno(r.root.Mkdir(rel(name), perm&fs.ModePerm))
	if errno == experimentalsys.ENOTDIR {
		errno = experimentalsys.ENOENT // as wazero's own mount says
	}
	return errno
}

// Chmod goes through an open file so that the link count checked is that
// of the file changed. WASI preview 1 has no chmod; this is for
// completeness.
func (r *rootFS) Chmod(name string, perm fs.FileMode) experimentalsys.Errno {
	if r.readOnly {
		return experimentalsys.EROFS
	}
	f, errno := r.OpenFile(name, experimentalsys.O_RDONLY, 0)
	if errno != 0 {
		return errno
	}
	defer f.Close()
	rf := f.(*rootFile)
	if errno := rf.checkLinks(); errno != 0 {
		return errno
	}
	return toErrno(rf.file.Chmod(perm & fs.ModePerm))
}

func (r *rootFS) Rename(from, to string) experimentalsys.Errno {
	if r.readOnly {
		return experimentalsys.EROFS
	}
	from, to = rel(from), rel(to)
	if from == to {
		return 0
	}
	return toErrno(r.root.Rename(from, to))
}

// Rmdir and Unlink look before they remove, as os.Root has one Remove for
// both: a race can only remove the other kind of entry, inside.
func (r *rootFS) Rmdir(name string) experimentalsys.Errno {
	return r.remove(rel(name), true)
}

func (r *rootFS) Unlink(name string) experimentalsys.Errno {
	return r.remove(rel(name), false)
}

func (r *rootFS) remove(name string, dir bool) experimentalsys.Errno {
	if r.readOnly {
		return experimentalsys.EROFS
	}
	fi, err := r.root.Lstat(name)
	switch {
	case err != nil:
		return toErrno(err)
	case dir && !fi.IsDir():
		return experimentalsys.ENOTDIR
	case !dir && fi.IsDir():
		return experimentalsys.EISDIR
	}
	return toErrno(r.root.Remove(name))
}

func (r *rootFS) Link(oldName, newName string) experimentalsys.Errno {
	if r.readOnly {
		return experimentalsys.EROFS
	}
	return toErrno(r.root.Link(rel(oldName), rel(newName)))
}

// Symlink refuses a target that is absolute or climbs out of the
// workspace: following it would be refused here anyway, but the bash
// tool or a tool on the host might follow it.
func (r *rootFS) Symlink(target, linkName string) experimentalsys.Errno {
	if r.readOnly {
		return experimentalsys.EROFS
	}
	linkName = rel(linkName)
	if r.escapes(target, linkName) {
		return experimentalsys.EPERM
	}
	return toErrno(r.root.Symlink(target, linkName))
}

// escapes says whether a symlink at linkName (relative to the root)
// pointing to target leads outside the root. Reading the text alone is
// not enough once the target climbs: the kernel resolves ".." from where
// the link's folder really is, and a symlink on the way there (a/b/s ->
// ../.. makes a/b/s/x sit at the root, not three deep) changes that. So
// a target with ".." may climb only at its start, and no further than the
// real depth of the link's folder, found by walking it with Lstat; a
// symlink among its folders is refused rather than followed.
func (r *rootFS) escapes(target, linkName string) bool {
	if target == "" || path.IsAbs(target) || strings.Contains(target, "\\") {
		return true
	}
	ups, ok := leadingUps(target)
	if !ok {
		return true
	}
	if ups == 0 {
		return false
	}
	depth, ok := r.realDepth(path.Dir(linkName))
	return !ok || ups > depth
}

// leadingUps counts the ".." a symlink target starts with; ok is false
// when a ".." comes after a name ("s/../.."), whose meaning depends on
// what s is when the link is followed.
func leadingUps(target string) (ups int, ok bool) {
	named := false
	for _, c := range strings.Split(target, "/") {
		switch {
		case c == "" || c == ".":
		case c == "..":
			if named {
				return 0, false
			}
			ups++
		default:
			named = true
		}
	}
	return ups, true
}

// realDepth is how many folders below the root dir is, walking it one
// component at a time with Lstat; ok is false when a component is "..",
// a symlink or not a folder, or cannot be looked at.
func (r *rootFS) realDepth(dir string) (int, bool) {
	var walked []string
	for _, c := range strings.Split(dir, "/") {
		switch c {
		case "", ".":
			continue
		case "..":
			return 0, false
		}
		walked = append(walked, c)
		fi, err := r.root.Lstat(strings.Join(walked, "/"))
		if err != nil || !fi.IsDir() {
			return 0, false
		}
	}
	return len(walked), true
}

func (r *rootFS) Readlink(name string) (string, experimentalsys.Errno) {
	target, err := r.root.Readlink(rel(name))
	return target, toErrno(err)
}

func (r *rootFS) Utimens(name string, atim, mtim int64) experimentalsys.Errno {
	if r.readOnly {
		return experimentalsys.EROFS
	}
	f, errno := r.OpenFile(name, experimentalsys.O_RDONLY, 0)
	if errno != 0 {
		return errno
	}
	defer f.Close()
	return f.Utimens(atim, mtim)
}

// toTime is a WASI time for os.Chtimes: the zero time leaves it as it is.
func toTime(ns int64) time.Time {
	if ns == experimentalsys.UTIME_OMIT {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

// toErrno maps an error from os to wazero's errno. os.Root refuses a path
// that escapes the root with an error that is not an errno ("path
// escapes from parent"): that, and any other such error, is EPERM, never
// the EIO wazero would make of it.
func toErrno(err error) experimentalsys.Errno {
	if err == nil {
		return 0
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return experimentalsys.UnwrapOSError(errno)
	}
	if e := experimentalsys.UnwrapOSError(err); e != experimentalsys.EIO {
		return e
	}
	return experimentalsys.EPERM
}

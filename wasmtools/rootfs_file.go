package wasmtools

import (
	"io"
	"io/fs"
	"os"
	"syscall"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/sys"
)

// rootFile is a file or folder rootFS opened. Everything it does goes
// through its descriptor, except SetAppend and Utimens, which need a name
// and find it again through the root, checking it is still the same file.
type rootFile struct {
	seeker[int64]
	fs     *rootFS
	name   string // relative to the root, as opened
	flag   int    // os flags it was opened with, for SetAppend
	file   *os.File
	dev    uint64
	ino    sys.Inode
	isDir  bool
	closed bool
}

var _ experimentalsys.File = (*rootFile)(nil)

func (f *rootFile) Dev() (uint64, experimentalsys.Errno)    { return f.dev, 0 }
func (f *rootFile) Ino() (sys.Inode, experimentalsys.Errno) { return f.ino, 0 }
func (f *rootFile) IsDir() (bool, experimentalsys.Errno)    { return f.isDir, 0 }
func (f *rootFile) IsAppend() bool                          { return f.flag&os.O_APPEND != 0 }

// SetAppend opens the file again with or without O_APPEND, which an open
// file cannot change portably, and keeps the offset.
func (f *rootFile) SetAppend(enable bool) experimentalsys.Errno {
	if f.closed {
		return experimentalsys.EBADF
	}
	if f.isDir {
		return experimentalsys.EISDIR
	}
	flag := f.flag &^ os.O_APPEND
	if enable {
		flag |= os.O_APPEND
	}
	if flag == f.flag {
		return 0
	}
	off, err := f.file.Seek(0, io.SeekCurrent)
	if err != nil {
		return toErrno(err)
	}
	nf, err := f.fs.root.OpenFile(f.name, flag, 0)
	if err != nil {
		return toErrno(err)
	}
	if errno := f.same(nf); errno != 0 {
		_ = nf.Close()
		return errno
	}
	if _, err := nf.Seek(off, io.SeekStart); err != nil {
		_ = nf.Close()
		return toErrno(err)
	}
	_ = f.file.Close()
	f.file, f.flag = nf, flag
	return 0
}

// same is ENOENT unless other is the file f has open.
func (f *rootFile) same(other *os.File) experimentalsys.Errno {
	fi, err := other.Stat()
	if err != nil {
		return toErrno(err)
	}
	if st := sys.NewStat_t(fi); st.Dev != f.dev || st.Ino != f.ino {
		return experimentalsys.ENOENT
	}
	return 0
}

func (f *rootFile) Stat() (sys.Stat_t, experimentalsys.Errno) {
	if f.closed {
		return sys.Stat_t{}, experimentalsys.EBADF
	}
	return stat(f.file.Stat())
}

func (f *rootFile) Read(buf []byte) (int, experimentalsys.Errno) {
	if len(buf) == 0 {
		return 0, 0
	}
	n, err := f.file.Read(buf)
	return n, f.errno(err)
}

func (f *rootFile) Pread(buf []byte, off int64) (int, experimentalsys.Errno) {
	if off < 0 {
		return 0, experimentalsys.EINVAL
	}
	if len(buf) == 0 {
		return 0, 0
	}
	n, err := f.file.ReadAt(buf, off)
	return n, f.errno(err)
}

// seeker gives rootFile the Seek of wazero's File, which returns an Errno.
// go vet wants every method named Seek with an int64 offset to be
// io.Seeker's; it does not look at one whose offset is a type parameter.
type seeker[Offset ~int64] struct{ f *rootFile }

func (s seeker[Offset]) Seek(offset Offset, whence int) (int64, experimentalsys.Errno) {
	return s.f.seek(int64(offset), whence)
}

func (f *rootFile) seek(offset int64, whence int) (int64, experimentalsys.Errno) {
	if uint(whence) > io.SeekEnd {
		return 0, experimentalsys.EINVAL
	}
	// On a folder, Seek(0, io.SeekStart) rewinds it and the next Readdir
	// reads it afresh.
	n, err := f.file.Seek(offset, whence)
	return n, f.errno(err)
}

// Readdir lists entries with lstat (from the folder's descriptor), so a
// symlink is listed as one and never followed.
func (f *rootFile) Readdir(n int) ([]experimentalsys.Dirent, experimentalsys.Errno) {
	if f.closed {
		return nil, experimentalsys.EBADF
	}
	if !f.isDir {
		return nil, experimentalsys.ENOTDIR
	}
	infos, err := f.file.Readdir(n)
	if errno := f.errno(err); errno != 0 {
		return nil, errno
	}
	dirents := make([]experimentalsys.Dirent, 0, len(infos))
	for _, fi := range infos {
		dirents = append(dirents, experimentalsys.Dirent{Name: fi.Name(), Ino: sys.NewStat_t(fi).Ino, Type: fi.Mode().Type()})
	}
	return dirents, 0
}

func (f *rootFile) Write(buf []byte) (int, experimentalsys.Errno) {
	if len(buf) == 0 {
		return 0, 0
	}
	n, err := f.file.Write(buf)
	return n, f.errno(err)
}

func (f *rootFile) Pwrite(buf []byte, off int64) (int, experimentalsys.Errno) {
	if off < 0 {
		return 0, experimentalsys.EINVAL
	}
	if len(buf) == 0 {
		return 0, 0
	}
	n, err := f.file.WriteAt(buf, off)
	return n, f.errno(err)
}

func (f *rootFile) Truncate(size int64) experimentalsys.Errno {
	if size < 0 {
		return experimentalsys.EINVAL
	}
	return f.errno(f.file.Truncate(size))
}

func (f *rootFile) Sync() experimentalsys.Errno     { return f.errno(f.file.Sync()) }
func (f *rootFile) Datasync() experimentalsys.Errno { return f.Sync() }

// Utimens sets the times through the root by name, once it has checked
// that the name still is this file and that the file has no other links.
func (f *rootFile) Utimens(atim, mtim int64) experimentalsys.Errno {
	if f.closed {
		return experimentalsys.EBADF
	}
	if f.fs.readOnly {
		return experimentalsys.EROFS
	}
	if errno := f.checkLinks(); errno != 0 {
		return errno
	}
	cur, err := f.fs.root.OpenFile(f.name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return toErrno(err)
	}
	errno := f.same(cur)
	_ = cur.Close()
	if errno != 0 {
		return errno
	}
	return toErrno(f.fs.root.Chtimes(f.name, toTime(atim), toTime(mtim)))
}

// checkLinks refuses to change a regular file that has other links.
func (f *rootFile) checkLinks() experimentalsys.Errno {
	st, errno := f.Stat()
	if errno == 0 && st.Mode&fs.ModeType == 0 && st.Nlink > 1 {
		errno = experimentalsys.EPERM
	}
	return errno
}

func (f *rootFile) Close() experimentalsys.Errno {
	if f.closed {
		return 0
	}
	f.closed = true
	return toErrno(f.file.Close())
}

// errno maps err, with the answers wazero's File contract asks for on a
// closed file and on a folder.
func (f *rootFile) errno(err error) experimentalsys.Errno {
	switch {
	case err == nil || err == io.EOF:
		return 0
	case f.closed:
		return experimentalsys.EBADF
	}
	errno := toErrno(err)
	if f.isDir && errno != experimentalsys.ENOTDIR {
		switch errno {
		case experimentalsys.EBADF, experimentalsys.EINVAL:
			return experimentalsys.EISDIR
		}
	}
	return errno
}

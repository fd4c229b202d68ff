package runtime

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"

	"github.com/agnx-lite/agnx-lite/storage"
)

// A session's archive is <data dir>/archive/<session id>.jsonl.gz: the
// events retention moved out of the database, as the stored event JSON,
// one a line, in gzip members appended one per retention pass. Each member
// is appended and fsynced before its events are pruned, and the file's
// length after it is recorded (kv "archive/<id>") in the transaction that
// prunes them. Bytes past the recorded length are a pass that crashed
// before its prune committed (perhaps torn by a crash): readers stop at the
// recorded length, and the next pass cuts them off before it appends,
// since their events are still in the database. Readers also keep only
// the first line of each seq, so a range copied twice does no harm.

// ArchiveDir is the folder of the archives of the sessions in st.
func ArchiveDir(st *storage.Store) string {
	return filepath.Join(filepath.Dir(st.Path()), "archive")
}

// archiveName is the session's archive file name, or "" when its id is
// not a safe file name (ids come from the database, which imports and old
// versions may have filled): such a session is never archived.
func archiveName(id string) string {
	if len(id) == 0 || len(id) > 128 || id[0] == '.' {
		return ""
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.') {
			return ""
		}
	}
	return id + ".jsonl.gz"
}

func archiveKey(id string) string { return "archive/" + id }

// appendArchive cuts the archive file back to good bytes (what a
// committed pass left), appends lines (events first..last) as one gzip
// member and fsyncs the file, and the folder when the file is new. It
// returns the file's new length.
func appendArchive(dir, id string, good int64, first, last uint64, lines [][]byte) (int64, error) {
	name := archiveName(id)
	if name == "" {
		return 0, fmt.Errorf("session id %q cannot name an archive file", id)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return 0, fmt.Errorf("create the archive folder %s: %w", dir, err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return 0, fmt.Errorf("open the archive folder %s: %w", dir, err)
	}
	defer root.Close()
	_, statErr := root.Lstat(name)
	created := errors.Is(statErr, fs.ErrNotExist)
	f, err := root.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return 0, fmt.Errorf("open the archive %s: %w", filepath.Join(dir, name), err)
	}
	defer f.Close()
	_, err = cutArchive(f, good)
	if err != nil {
		return 0, fmt.Errorf("archive %s: %w", filepath.Join(dir, name), err)
	}
	member, err := encodeMember(lines, first, last)
	if err != nil {
		return 0, fmt.Errorf("compress the archive %s: %w", filepath.Join(dir, name), err)
	}
	if _, err := f.Write(member); err != nil {
		return 0, fmt.Errorf("write the archive %s: %w", filepath.Join(dir, name), err)
	}
	if err := f.Sync(); err != nil {
		return 0, fmt.Errorf("sync the archive %s: %w", filepath.Join(dir, name), err)
	}
	if created {
		if err := storage.SyncDir(dir); err != nil {
			return 0, err
		}
	}
	return f.Seek(0, io.SeekCurrent)
}

// Each member's gzip header carries an extra field "AX" of 24 bytes: the
// member's length in the file and the first and last seq it holds, so a
// reader that wants later events skips a member without inflating it.
const (
	memberHeader   = 10 + 2 + memberExtraLen // fixed header, XLEN, extra field
	memberExtraLen = 4 + 24
)

// encodeMember compresses lines, one a line, into a gzip member.
func encodeMember(lines [][]byte, first, last uint64) ([]byte, error) {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed) // BestSpeed is a valid level
	extra := make([]byte, memberExtraLen)
	extra[0], extra[1] = 'A', 'X'
	binary.LittleEndian.PutUint16(extra[2:], 24)
	binary.LittleEndian.PutUint64(extra[12:], first)
	binary.LittleEndian.PutUint64(extra[20:], last)
	zw.Header.Extra = extra
	for _, l := range lines {
		if _, err := zw.Write(l); err != nil {
			return nil, err
		}
		if _, err := zw.Write([]byte{'\n'}); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	binary.LittleEndian.PutUint64(b[16:], uint64(len(b))) // the extra field's data starts at 16
	return b, nil
}

// memberSpan reads a member's extra field: its length and last seq; ok
// is false for a member without one.
func memberSpan(h *gzip.Header) (length int64, last uint64, ok bool) {
	x := h.Extra
	if len(x) != memberExtraLen || x[0] != 'A' || x[1] != 'X' || binary.LittleEndian.Uint16(x[2:]) != 24 {
		return 0, 0, false
	}
	n := binary.LittleEndian.Uint64(x[4:])
	if n < memberHeader || n > math.MaxInt32 {
		return 0, 0, false
	}
	return int64(n), binary.LittleEndian.Uint64(x[20:]), true
}

// cutArchive truncates the file to good bytes when it is longer, and
// leaves its offset at the end. A file shorter than good was not written
// by the passes the database remembers: it is appended to as it is.
func cutArchive(f *os.File, good int64) (int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	end := fi.Size()
	if end > good {
		if err := f.Truncate(good); err != nil {
			return 0, err
		}
		end = good
	}
	return f.Seek(end, io.SeekStart)
}

// removeArchive deletes the session's archive file, if any.
func removeArchive(dir, id string) error {
	name := archiveName(id)
	if name == "" {
		return nil
	}
	err := os.Remove(filepath.Join(dir, name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// maxArchiveLine bounds one line of an archive, in bytes: an event is far
// smaller (tool results are capped); a longer line is damage.
const maxArchiveLine = 16 << 20

// ArchiveDamagedError is returned by readers of an archive that cannot be
// read to its end; what came before the damage was read.
type ArchiveDamagedError struct {
	Path string
	Err  error
}

func (e *ArchiveDamagedError) Error() string {
	return fmt.Sprintf("the archive %s is damaged (%v): the events read before the damage are shown, restore the file from a backup for the rest", e.Path, e.Err)
}

func (e *ArchiveDamagedError) Unwrap() error { return e.Err }

// committedLength decodes the archive length a pass recorded (kv
// "archive/<id>"); 0 when none did.
func committedLength(kv []byte) int64 {
	n, k := binary.Uvarint(kv)
	if k <= 0 || n > math.MaxInt64 {
		return 0
	}
	return int64(n)
}

// readArchive calls fn with each line of the first length bytes of the
// archive file at path, in file order, skipping the members that end
// before seq from, and returns the first error fn returns unchanged. A
// missing file has no lines. A damaged member, or one cut short, ends the
// read with an *ArchiveDamagedError.
func readArchive(path string, length int64, from uint64, fn func(line []byte) error) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("open the archive %s: %w", path, err)
	}
	defer f.Close()
	return readArchiveFrom(io.LimitReader(f, length), path, from, fn)
}

// errLineTooLong is the damage of a line past maxArchiveLine.
var errLineTooLong = errors.New("a line is longer than any event")

func readArchiveFrom(r io.Reader, path string, from uint64, fn func(line []byte) error) error {
	br := bufio.NewReaderSize(r, 32<<10)
	zr := new(gzip.Reader)
	lr := bufio.NewReaderSize(nil, 64<<10)
	damaged := func(err error) error { return &ArchiveDamagedError{Path: path, Err: err} }
	for {
		if _, err := br.Peek(1); err == io.EOF {
			return nil
		}
		if err := zr.Reset(br); err != nil {
			return damaged(err)
		}
		zr.Multistream(false)
		if n, last, ok := memberSpan(&zr.Header); ok && last < from {
			if _, err := br.Discard(int(n - memberHeader)); err != nil {
				return damaged(err)
			}
			continue
		}
		lr.Reset(zr)
		for {
			line, err := readLine(lr)
			if err == io.EOF {
				break
			}
			if err != nil {
				return damaged(err)
			}
			if line = bytes.TrimSpace(line); len(line) > 0 {
				if err := fn(line); err != nil {
					return err
				}
			}
		}
	}
}

// readLine returns the next line, '\n' included; io.EOF only at a clean
// end, io.ErrUnexpectedEOF for a last line without its '\n'.
func readLine(r *bufio.Reader) ([]byte, error) {
	var long []byte
	for {
		frag, err := r.ReadSlice('\n')
		switch {
		case err == nil && long == nil:
			return frag, nil
		case err == nil:
			return append(long, frag...), nil
		case err == bufio.ErrBufferFull:
			if long = append(long, frag...); len(long) > maxArchiveLine {
				return nil, errLineTooLong
			}
		case err == io.EOF && len(frag) == 0 && long == nil:
			return nil, io.EOF
		case err == io.EOF:
			return nil, io.ErrUnexpectedEOF
		default:
			return nil, err
		}
	}
}

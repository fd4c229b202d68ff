package bgproc

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"syscall"
)

// logDir is where a workspace keeps its processes' output.
const logDir = ".agnx/processes"

// DefaultMaxLog is the size a process's log file is kept under.
const DefaultMaxLog = 8 << 20

// minMaxLog is the smallest cap Options.MaxLogBytes may set: room for a
// few copy buffers on each side of the cut.
const minMaxLog = 256 << 10

// logName is a handle's log path, relative to the workspace.
func logName(handle string) string { return path.Join(logDir, handle+".log") }

// openRoot opens the workspace as an os.Root, so that nothing the
// sandboxed command did to it (a symlink in .agnx) leads a write outside.
func openRoot(workspace string) (*os.Root, error) {
	r, err := os.OpenRoot(workspace)
	if errors.Is(err, os.ErrNotExist) {
		if err = os.MkdirAll(workspace, 0o755); err == nil {
			r, err = os.OpenRoot(workspace)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("the workspace %s cannot be opened (%v): check that it exists and is a folder", workspace, err)
	}
	return r, nil
}

// logFile is a process's output on disk, written by its copier alone.
// Past max bytes, the oldest half is dropped in place: a marker line
// takes its place, saying how much output is gone in all.
type logFile struct {
	f       *os.File
	size    int64
	max     int64
	dropped int64 // output bytes dropped so far
	marker  int64 // length of the marker line at the file's start; 0: none
	buf     []byte
}

// createLog creates the handle's log file in the workspace; an existing
// file or symlink of that name is an error, never followed.
func createLog(root *os.Root, name string, max int64) (*logFile, error) {
	if err := root.MkdirAll(logDir, 0o755); err != nil {
		return nil, fmt.Errorf("the folder %s cannot be made in the workspace (%v): remove what is in its way", logDir, err)
	}
	f, err := root.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return nil, fmt.Errorf("the log file %s cannot be created (%v): remove what is in its way", name, err)
	}
	return &logFile{f: f, max: max, buf: make([]byte, 32<<10)}, nil
}

// Write appends p, making room first when it would pass the cap.
func (l *logFile) Write(p []byte) (int, error) {
	n := len(p)
	if q := l.max / 4; int64(len(p)) > q { // only a caller writing huge chunks
		l.dropped += int64(len(p)) - q
		p = p[int64(len(p))-q:]
	}
	if l.size+int64(len(p)) > l.max {
		if err := l.compact(); err != nil {
			return 0, err
		}
	}
	if _, err := l.f.WriteAt(p, l.size); err != nil {
		return 0, err
	}
	l.size += int64(len(p))
	return n, nil
}

// compact keeps the last half of the cap, from a line's start when one
// begins within 4 KiB, behind a new marker line.
func (l *logFile) compact() error {
	start := l.size - l.max/2
	head := l.buf[:min(4<<10, len(l.buf))]
	if n, _ := l.f.ReadAt(head, start); n > 0 {
		if i := strings.IndexByte(string(head[:n]), '\n'); i >= 0 {
			start += int64(i) + 1
		}
	}
	l.dropped += start - l.marker
	marker := fmt.Sprintf("[... %d bytes of earlier output were dropped: the log keeps its last %d KiB ...]\n",
		l.dropped, l.max>>10)
	dst := int64(len(marker))
	for src := start; src < l.size; {
		n, err := l.f.ReadAt(l.buf, src)
		if n > 0 {
			if _, werr := l.f.WriteAt(l.buf[:n], dst); werr != nil {
				return werr
			}
			src, dst = src+int64(n), dst+int64(n)
		}
		if err != nil {
			if err == io.EOF {
				break
			}
			return err
		}
	}
	if _, err := l.f.WriteAt([]byte(marker), 0); err != nil {
		return err
	}
	l.size, l.marker = dst, int64(len(marker))
	return l.f.Truncate(l.size)
}

func (l *logFile) Close() error { return l.f.Close() }

// openLog opens a log file for reading, following no symlink.
func openLog(workspace, name string) (*os.File, error) {
	root, err := openRoot(workspace)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, fmt.Errorf("the process's log %s cannot be read (%v): it may have been deleted", name, err)
	}
	return f, nil
}

// readTail returns the last n bytes of the log, from a line's start when
// it was cut, as valid UTF-8.
func readTail(workspace, name string, n int) (string, error) {
	f, err := openLog(workspace, name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	start := max(st.Size()-int64(n), 0)
	buf := make([]byte, st.Size()-start)
	m, err := f.ReadAt(buf, start)
	if err != nil && err != io.EOF {
		return "", err
	}
	s := string(buf[:m])
	if start > 0 {
		if i := strings.IndexByte(s, '\n'); i >= 0 && i < len(s)-1 {
			s = s[i+1:]
		}
	}
	return strings.ToValidUTF8(s, "\uFFFD"), nil
}

// Bounds of one log window.
const (
	maxLine      = 4 << 10   // a longer line is cut, with a note
	maxWindow    = 128 << 10 // bytes one window returns at most
	maxLogLimit  = 1000      // lines one window returns at most
	defaultLimit = 100
)

// readWindow returns limit lines from line offset on, joined by "\n".
// Memory is bounded by the window, not the file.
func readWindow(workspace, name string, offset, limit int) (string, error) {
	f, err := openLog(workspace, name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, maxLine)
	var b strings.Builder
	for i, taken := 0, 0; taken < limit; i++ {
		line, err := readLine(r)
		if err != nil {
			break
		}
		if i < offset {
			continue
		}
		if b.Len()+len(line) > maxWindow {
			fmt.Fprintf(&b, "\n[... window cut at %d KiB: ask for a later offset ...]", maxWindow>>10)
			break
		}
		if taken > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(line)
		taken++
	}
	return strings.ToValidUTF8(b.String(), "\uFFFD"), nil
}

// readLine returns the next line without its newline, cut at maxLine;
// io.EOF once there is none.
func readLine(r *bufio.Reader) (string, error) {
	part, err := r.ReadSlice('\n')
	if len(part) == 0 && err != nil {
		return "", err
	}
	line := strings.TrimSuffix(string(part), "\n")
	if err == bufio.ErrBufferFull {
		for err == bufio.ErrBufferFull { // skip the rest of the line
			_, err = r.ReadSlice('\n')
		}
		line += " [… line cut]"
	}
	return line, nil
}

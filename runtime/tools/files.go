package tools

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"unicode/utf8"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// maxReadBytes caps what one read_file call returns. The file itself may
// be of any size: read_file streams through it to the window asked for
// and holds no more than this, plus one read buffer, in memory.
const maxReadBytes = 256 << 10

// readBuffer is the size of the buffer file tools read through.
const readBuffer = 32 << 10

// decodeArgs decodes a call's JSON arguments into v; empty means {}.
func decodeArgs(args []byte, v any) error {
	if len(bytes.TrimSpace(args)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("failed to parse tool arguments: %v", err)
	}
	return nil
}

// ReadFile reads a text file in the workspace.
type ReadFile struct{ Workspace string }

var _ runtime.Tool = (*ReadFile)(nil)

type readFileArgs struct {
	Path   string `json:"path"`
	Offset int    `json:"offset"`
	Limit  int    `json:"limit"`
}

const readFileSchema = `{"type":"object","properties":{` +
	`"path":{"type":"string","description":"File path relative to the workspace"},` +
	`"offset":{"type":"integer","description":"First line to read, counting from 1 (default 1)"},` +
	`"limit":{"type":"integer","description":"How many lines to read (default: as many as fit in 256 KiB)"}},` +
	`"required":["path"],"additionalProperties":false}`

// Spec describes read_file to the model.
func (t *ReadFile) Spec() runtime.ToolSpec {
	return runtime.ToolSpec{
		Name: "read_file",
		Description: "Read a text file from your workspace, up to 256 KiB at a time. " +
			"Optionally give offset and limit to read a range of lines; a longer file says where to go on.",
		Schema: []byte(readFileSchema),
	}
}

// Run reads the file.
func (t *ReadFile) Run(ctx context.Context, raw []byte) (runtime.Result, error) {
	var a readFileArgs
	if err := decodeArgs(raw, &a); err != nil {
		return runtime.ErrorResult("error: read_file: " + err.Error()), nil
	}
	if a.Path == "" {
		return runtime.ErrorResult("error: read_file: path is required"), nil
	}
	root, refused, err := openWorkspace(ctx, t.Workspace, false)
	if root == nil {
		return refused, err
	}
	defer root.Close()
	f, _, err := openRegular(root, cleanPath(t.Workspace, a.Path), os.O_RDONLY, 0)
	if err != nil {
		return fsError("read_file", a.Path, err), nil
	}
	defer f.Close()
	text, err := readLines(ctx, f, a.Offset, a.Limit)
	switch {
	case errors.Is(err, errBinary):
		return runtime.ErrorResult(fmt.Sprintf("error: read_file: %q is a binary file", a.Path)), nil
	case err != nil:
		return fsError("read_file", a.Path, err), nil
	}
	return runtime.Result{Content: text}, nil
}

// errBinary is returned by readLines for text holding a NUL byte.
var errBinary = errors.New("binary file")

// readLines streams r and returns lines offset..offset+limit-1 (1-based;
// zero values mean from the start and to the end), stopping at
// maxReadBytes with a note that says which offset to read on from. Lines
// before the window are skipped a buffer at a time, so neither a huge file
// nor a huge line is ever held whole.
func readLines(ctx context.Context, r io.Reader, offset, limit int) (string, error) {
	br := bufio.NewReaderSize(r, readBuffer)
	first := max(offset, 1)
	line, partial := 1, false // partial: bytes of line were read, not yet its end
	lineStart := 0            // where line begins in out
	var out bytes.Buffer
	for chunks := 0; ; chunks++ {
		if chunks%64 == 0 && ctx.Err() != nil {
			return "", ctx.Err()
		}
		frag, err := br.ReadSlice('\n')
		if len(frag) > 0 && line >= first {
			if bytes.IndexByte(frag, 0) >= 0 {
				return "", errBinary
			}
			if out.Len()+len(frag) > maxReadBytes {
				return cutWindow(&out, frag, line, lineStart), nil
			}
			out.Write(frag)
		}
		partial = partial || len(frag) > 0
		if len(frag) > 0 && frag[len(frag)-1] == '\n' {
			line, partial, lineStart = line+1, false, out.Len()
			if limit > 0 && line >= first+limit {
				return out.String(), nil
			}
		}
		switch {
		case err == nil, errors.Is(err, bufio.ErrBufferFull):
		case errors.Is(err, io.EOF):
			if seen := line - 1 + boolInt(partial); offset > 1 && offset > seen {
				return fmt.Sprintf("[the file has only %d lines]", seen), nil
			}
			return out.String(), nil
		default:
			return "", err
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// cutWindow ends a read at the size cap. A window that already holds whole
// lines stops before the line that does not fit; a first line longer than
// the cap is cut (at a character boundary) and the read goes on after it.
func cutWindow(out *bytes.Buffer, frag []byte, line, lineStart int) string {
	if lineStart > 0 {
		out.Truncate(lineStart)
		return out.String() + fmt.Sprintf("[... stopped before line %d to stay under %d KiB; read further with offset=%d ...]",
			line, maxReadBytes>>10, line)
	}
	out.Write(frag[:maxReadBytes-out.Len()])
	return string(trimPartialRune(out.Bytes())) + fmt.Sprintf("\n[... line %d is longer than %d KiB and was cut; read further with offset=%d ...]",
		line, maxReadBytes>>10, line+1)
}

// trimPartialRune drops a UTF-8 sequence cut off at the end of b.
func trimPartialRune(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}

// Subject is what policies match: the path relative to the workspace, as
// it will be opened.
func (t *ReadFile) Subject(args []byte) string {
	var a readFileArgs
	_ = decodeArgs(args, &a)
	return cleanPath(t.Workspace, a.Path)
}

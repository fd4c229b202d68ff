package memory

import (
	"encoding/binary"
	"errors"
	"time"
)

// Index tables (storage kinds) of one agent's scope "mem/<agent>".
const (
	kindPost  = "post"  // term \x00 id → uvarint tf, uvarint doc length
	kindDoc   = "doc"   // id → docRec
	kindMeta  = "meta"  // name → value (metaN, metaLen, metaNext, metaModel, metaFormat)
	kindFile  = "file"  // source → fileRec
	kindSess  = "sess"  // session id → uvarint last seq indexed
	kindSDoc  = "sdoc"  // session id \x00 id → empty: the session's docs
	kindVec   = "vec"   // id → float32 scale, int8 × dim
	kindNoVec = "novec" // id → empty: a doc still waiting for its vector
)

var (
	metaN      = []byte("n")
	metaLen    = []byte("len")
	metaNext   = []byte("next")
	metaModel  = []byte("model")
	metaFormat = []byte("format")
)

// format is the layout version of the tables; another value drops the
// index and rebuilds it from the files and sessions.
const format = "1"

// maxText is how much of an entry a doc record keeps to show in a hit.
const maxText = 1024

// maxHeading bounds a stored heading.
const maxHeading = 200

var errBadRecord = errors.New("index record unreadable")

func idKey(id uint64) []byte { return binary.BigEndian.AppendUint64(make([]byte, 0, 8), id) }

func postKey(term string, id uint64) []byte {
	k := make([]byte, 0, len(term)+9)
	k = append(append(k, term...), 0)
	return binary.BigEndian.AppendUint64(k, id)
}

// docRec is what the index keeps of one entry.
type docRec struct {
	source, heading string
	date            time.Time
	length          uint64
	text            string
	terms           map[string]int // to remove its postings
}

func (d *docRec) encode() []byte {
	b := appendStr(nil, d.source)
	b = appendStr(b, d.heading)
	b = binary.AppendVarint(b, d.date.UnixNano())
	b = binary.AppendUvarint(b, d.length)
	b = appendStr(b, d.text)
	b = binary.AppendUvarint(b, uint64(len(d.terms)))
	for t, n := range d.terms {
		b = appendStr(b, t)
		b = binary.AppendUvarint(b, uint64(n))
	}
	return b
}

// decodeDoc reads a doc record; with terms unset it skips the term list.
func decodeDoc(b []byte, terms bool) (docRec, error) {
	r := reader{b: b}
	d := docRec{source: r.str(), heading: r.str()}
	d.date = time.Unix(0, r.varint())
	d.length = r.uvarint()
	d.text = r.str()
	if terms {
		n := r.uvarint()
		if n > uint64(len(b)) {
			return d, errBadRecord
		}
		d.terms = make(map[string]int, n)
		for range n {
			t := r.str()
			d.terms[t] = int(r.uvarint())
		}
	}
	if r.bad {
		return d, errBadRecord
	}
	return d, nil
}

// fileRec is what the index keeps of one memory file.
type fileRec struct {
	size  int64
	mtime int64 // UnixNano
	hash  string
	ids   []uint64
}

func (f *fileRec) encode() []byte {
	b := binary.AppendVarint(nil, f.size)
	b = binary.AppendVarint(b, f.mtime)
	b = appendStr(b, f.hash)
	b = binary.AppendUvarint(b, uint64(len(f.ids)))
	for _, id := range f.ids {
		b = binary.AppendUvarint(b, id)
	}
	return b
}

func decodeFile(b []byte) (fileRec, error) {
	r := reader{b: b}
	f := fileRec{size: r.varint(), mtime: r.varint(), hash: r.str()}
	n := r.uvarint()
	if n > uint64(len(b)) {
		return f, errBadRecord
	}
	for range n {
		f.ids = append(f.ids, r.uvarint())
	}
	if r.bad {
		return f, errBadRecord
	}
	return f, nil
}

func appendStr(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// reader decodes what the index wrote; damage sets bad, never panics.
type reader struct {
	b   []byte
	bad bool
}

func (r *reader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.bad, r.b = true, nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.bad, r.b = true, nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) str() string {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.bad, r.b = true, nil
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

func uvarintOf(b []byte) uint64 {
	v, n := binary.Uvarint(b)
	if n <= 0 {
		return 0
	}
	return v
}

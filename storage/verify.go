package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
)

// verifyFile walks the page tree of a bbolt file with plain reads, before
// bbolt maps it. bbolt trusts its pages: on a damaged one it panics, at
// Open in a goroutine of its own (the freelist rebuild) where no recover
// can reach, or faults on a page past the end of a truncated file. So the
// structure bbolt will follow is checked here first, in this goroutine,
// with every offset bounded: each reachable page must lie inside the file
// and below the high-water mark, carry its own id and a branch or leaf
// flag, hold its elements inside its bytes, and be referenced once.
//
// It reads every branch and leaf page header and element array (not the
// values, except bucket headers): about what bbolt's own freelist rebuild
// reads on every Open. A nil error means bbolt can follow every link; it
// says nothing about the bytes of the values.
func verifyFile(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() == 0 {
		return errEmptyFile
	}
	m, err := readMeta(f, fi.Size())
	if err != nil {
		return err
	}
	if need := int64(m.hwm) * int64(m.pageSize); fi.Size() < need {
		return fmt.Errorf("the file is %d bytes, its pages need %d: it was cut short", fi.Size(), need)
	}
	w := walker{f: f, ps: int64(m.pageSize), hwm: m.hwm, seen: make([]uint64, m.hwm/64+1)}
	if m.freelist != noFreelist {
		if err := w.freelist(m.freelist); err != nil {
			return err
		}
	}
	return w.walk(m.root)
}

// errEmptyFile is why a 0-byte file is refused: bbolt would lay out a new
// database over it, silently replacing one that was lost.
// A first start killed between creating the file and writing it leaves
// one too, with nothing to lose: the sentence says so.
var errEmptyFile = errors.New("the file is empty (0 bytes); if agnx-lite never stored anything here, delete it to start afresh")

// bbolt's on-disk format (version 2), native byte order: a 16-byte page
// header {id u64, flags u16, count u16, overflow u32}, then elements of 16
// bytes; a meta page holds {magic, version, pageSize, flags u32; root,
// sequence, freelist, pgid, txid, checksum u64} after the header.
const (
	pageHeader   = 16
	elementSize  = 16
	bucketHeader = 16
	flagBranch   = 0x01
	flagLeaf     = 0x02
	flagFreelist = 0x10
	flagBucket   = 0x01 // on a leaf element: the value is a bucket
	noFreelist   = ^uint64(0)
	boltMagic    = 0xED0CDAED
	boltVersion  = 2
	metaSumLen   = 56 // bytes of the meta before its checksum
)

var ne = binary.NativeEndian

type boltMeta struct {
	pageSize uint32
	root     uint64
	freelist uint64 // noFreelist unless an older build synced it
	hwm      uint64
	txid     uint64
}

// readMeta picks the meta page bbolt would use: the valid one with the
// higher txid. One damaged meta page is what a torn write leaves, and
// bbolt falls back to the other; both damaged is the end.
func readMeta(f *os.File, size int64) (boltMeta, error) {
	best, found := parseMeta(f, 0)
	second := []int64{512, 1024, 2048, 4096, 8192, 16384, 32768, 65536} // where page 1 may start
	if found {
		second = []int64{int64(best.pageSize)}
	}
	for _, off := range second {
		if off+pageHeader+metaSumLen+8 > size {
			break
		}
		m, ok := parseMeta(f, off)
		if ok && int64(m.pageSize) == off && (!found || m.txid > best.txid) {
			best, found = m, true
		}
	}
	if !found {
		return best, errors.New("neither meta page is valid")
	}
	return best, nil
}

func parseMeta(f *os.File, off int64) (boltMeta, bool) {
	var b [pageHeader + metaSumLen + 8]byte
	if _, err := f.ReadAt(b[:], off); err != nil {
		return boltMeta{}, false
	}
	mb := b[pageHeader:]
	h := fnv.New64a()
	h.Write(mb[:metaSumLen])
	if ne.Uint32(mb[0:]) != boltMagic || ne.Uint32(mb[4:]) != boltVersion || ne.Uint64(mb[metaSumLen:]) != h.Sum64() {
		return boltMeta{}, false
	}
	m := boltMeta{pageSize: ne.Uint32(mb[8:]), root: ne.Uint64(mb[16:]), freelist: ne.Uint64(mb[32:]),
		hwm: ne.Uint64(mb[40:]), txid: ne.Uint64(mb[48:])}
	if m.pageSize < 512 || m.pageSize > 1<<20 || m.hwm < 2 {
		return boltMeta{}, false
	}
	return m, true
}

// walker follows the tree from the root bucket with an explicit stack, so a
// hostile file cannot make it recurse deeply. Each page comes with the key
// range its parent gives it, [lo, hi), as bbolt's check wants it: keys
// strictly ascending on a page, and inside that range.
type walker struct {
	f     *os.File
	ps    int64
	hwm   uint64
	seen  []uint64 // bit per page: referenced once already
	stack []link
	buf   []byte
}

type link struct {
	id     uint64
	lo, hi []byte // nil: unbounded
}

// smallSpan is the longest page run read in one go; a longer one (a big
// value on overflow pages) is read part by part, so a huge value never
// needs a buffer as large.
const smallSpan = 64 << 10

func (w *walker) walk(root uint64) error {
	w.stack = append(w.stack[:0], link{id: root})
	for len(w.stack) > 0 {
		l := w.stack[len(w.stack)-1]
		w.stack = w.stack[:len(w.stack)-1]
		if err := w.page(l); err != nil {
			return err
		}
	}
	return nil
}

// page checks one page and pushes the pages it links to. A page is read
// in one go (two for a run of overflow pages) unless it is longer than
// smallSpan, whose parts are then read one by one.
func (w *walker) page(l link) error {
	id := l.id
	if id < 2 || id >= w.hwm {
		return fmt.Errorf("a link points at page %d, outside 2..%d", id, w.hwm-1)
	}
	if w.seen[id/64]&(1<<(id%64)) != 0 {
		return fmt.Errorf("page %d is linked twice", id)
	}
	w.seen[id/64] |= 1 << (id % 64)
	pg := span{f: w.f, base: int64(id) * w.ps}
	if err := w.load(&pg, w.ps); err != nil {
		return fmt.Errorf("page %d: %w", id, err)
	}
	h := pg.mem
	if got := ne.Uint64(h[0:]); got != id {
		return fmt.Errorf("page %d says it is page %d", id, got)
	}
	flags, count, overflow := ne.Uint16(h[8:]), int64(ne.Uint16(h[10:])), uint64(ne.Uint32(h[12:]))
	if flags != flagBranch && flags != flagLeaf {
		return fmt.Errorf("page %d has type %#x, not a branch or a leaf", id, flags)
	}
	if id+overflow >= w.hwm {
		return fmt.Errorf("page %d runs past the last page", id)
	}
	for o := id + 1; o <= id+overflow; o++ {
		if w.seen[o/64]&(1<<(o%64)) != 0 {
			return fmt.Errorf("page %d overlaps another", id)
		}
		w.seen[o/64] |= 1 << (o % 64)
	}
	pg.size = int64(overflow+1) * w.ps
	if pageHeader+count*elementSize > pg.size {
		return fmt.Errorf("page %d claims %d elements, more than it holds", id, count)
	}
	if overflow > 0 {
		if pg.size > smallSpan {
			pg.mem = nil // read part by part
		} else if err := w.load(&pg, pg.size); err != nil {
			return fmt.Errorf("page %d: %w", id, err)
		}
	}
	if flags == flagBranch {
		return w.branch(id, &pg, count, l)
	}
	return w.leaf(id, &pg, count, l)
}

// span is a page run: held in memory (mem) or read from the file on
// demand when it is too long.
type span struct {
	f    *os.File
	base int64
	size int64
	mem  []byte
}

// at returns n bytes at off inside the span; the slice is valid until the
// walker's next load.
func (s *span) at(off, n int64) ([]byte, error) {
	if s.mem != nil {
		return s.mem[off : off+n], nil
	}
	b := make([]byte, n)
	if _, err := s.f.ReadAt(b, s.base+off); err != nil {
		return nil, err
	}
	return b, nil
}

func (w *walker) load(s *span, n int64) error {
	if int64(cap(w.buf)) < n {
		w.buf = make([]byte, n)
	}
	b := w.buf[:n]
	if _, err := w.f.ReadAt(b, s.base); err != nil {
		if errors.Is(err, io.EOF) {
			return errors.New("past the end of the file")
		}
		return err
	}
	s.mem = b
	return nil
}

func (w *walker) branch(id uint64, pg *span, count int64, l link) error {
	elems, err := pg.at(0, pageHeader+count*elementSize)
	if err != nil {
		return fmt.Errorf("page %d: %w", id, err)
	}
	keys := make([][]byte, count)
	for i := range count {
		e := pageHeader + i*elementSize
		pos, ksize := int64(ne.Uint32(elems[e:])), int64(ne.Uint32(elems[e+4:]))
		if e+pos+ksize > pg.size {
			return fmt.Errorf("page %d: element %d lies outside the page", id, i)
		}
		k, err := pg.at(e+pos, ksize)
		if err != nil {
			return fmt.Errorf("page %d: %w", id, err)
		}
		keys[i] = bytes.Clone(k) // bounds of the children, kept on the stack
	}
	if err := keyOrder(keys, l.lo, l.hi); err != nil {
		return fmt.Errorf("page %d: %w", id, err)
	}
	for i := range count {
		hi := l.hi
		if i+1 < count {
			hi = keys[i+1]
		}
		child := ne.Uint64(elems[pageHeader+i*elementSize+8:])
		w.stack = append(w.stack, link{id: child, lo: keys[i], hi: hi})
	}
	return nil
}

// leaf checks the elements and follows bucket values: a header {root,
// sequence}, with root 0 for an inline bucket whose page follows in the
// value itself.
func (w *walker) leaf(id uint64, pg *span, count int64, l link) error {
	elems, err := pg.at(0, pageHeader+count*elementSize)
	if err != nil {
		return fmt.Errorf("page %d: %w", id, err)
	}
	var prev []byte
	for i := range count {
		e := pageHeader + i*elementSize
		flags := ne.Uint32(elems[e:])
		pos, ksize, vsize := int64(ne.Uint32(elems[e+4:])), int64(ne.Uint32(elems[e+8:])), int64(ne.Uint32(elems[e+12:]))
		if e+pos+ksize+vsize > pg.size {
			return fmt.Errorf("page %d: element %d lies outside the page", id, i)
		}
		k, err := pg.at(e+pos, ksize)
		if err != nil {
			return fmt.Errorf("page %d: %w", id, err)
		}
		if i == 0 && l.lo != nil && bytes.Compare(k, l.lo) < 0 || i > 0 && bytes.Compare(prev, k) >= 0 ||
			l.hi != nil && bytes.Compare(k, l.hi) >= 0 {
			return fmt.Errorf("page %d: key %d is out of order", id, i)
		}
		prev = k
		if flags&flagBucket == 0 {
			continue
		}
		v, err := pg.at(e+pos+ksize, vsize)
		if err != nil {
			return fmt.Errorf("page %d: %w", id, err)
		}
		if vsize < bucketHeader {
			return fmt.Errorf("page %d: element %d is a bucket of %d bytes", id, i, vsize)
		}
		if root := ne.Uint64(v); root != 0 {
			w.stack = append(w.stack, link{id: root})
		} else if err := inlinePage(v[bucketHeader:]); err != nil {
			return fmt.Errorf("page %d: %w", id, err)
		}
	}
	return nil
}

// keyOrder is bbolt's rule: keys strictly ascending, inside [lo, hi).
func keyOrder(keys [][]byte, lo, hi []byte) error {
	for i, k := range keys {
		switch {
		case i == 0 && lo != nil && bytes.Compare(k, lo) < 0,
			i > 0 && bytes.Compare(keys[i-1], k) >= 0,
			hi != nil && bytes.Compare(k, hi) >= 0:
			return fmt.Errorf("key %d is out of order", i)
		}
	}
	return nil
}

// freelist checks the page a synced freelist lives on, which bbolt reads
// at Open: it must be one, inside the file.
func (w *walker) freelist(id uint64) error {
	var h [pageHeader]byte
	if id < 2 || id >= w.hwm {
		return fmt.Errorf("the freelist is at page %d, outside 2..%d", id, w.hwm-1)
	}
	if _, err := w.f.ReadAt(h[:], int64(id)*w.ps); err != nil {
		return fmt.Errorf("freelist page %d: %w", id, err)
	}
	overflow := uint64(ne.Uint32(h[12:]))
	if ne.Uint64(h[0:]) != id || ne.Uint16(h[8:]) != flagFreelist || id+overflow >= w.hwm {
		return fmt.Errorf("freelist page %d is damaged", id)
	}
	for o := id; o <= id+overflow; o++ {
		w.seen[o/64] |= 1 << (o % 64)
	}
	return nil
}

// inlinePage checks a bucket stored inside its parent's value: one leaf
// page with no links out (an inline bucket has no sub-buckets).
func inlinePage(p []byte) error {
	if len(p) < pageHeader {
		return errors.New("an inline bucket is cut short")
	}
	flags, count := ne.Uint16(p[8:]), int64(ne.Uint16(p[10:]))
	if flags != flagLeaf && count > 0 {
		return fmt.Errorf("an inline bucket has type %#x", flags)
	}
	span := int64(len(p))
	if pageHeader+count*elementSize > span {
		return errors.New("an inline bucket claims more elements than it holds")
	}
	for i := range count {
		e := pageHeader + i*elementSize
		pos, ksize, vsize := int64(ne.Uint32(p[e+4:])), int64(ne.Uint32(p[e+8:])), int64(ne.Uint32(p[e+12:]))
		if e+pos+ksize+vsize > span {
			return errors.New("an inline bucket's element lies outside it")
		}
		if ne.Uint32(p[e:])&flagBucket != 0 {
			return errors.New("an inline bucket holds a bucket")
		}
	}
	return nil
}

package runtime

import "bytes"

// Test seams for the external tests of this package.

// AppendArchive appends lines to the session's archive past its first
// good bytes, as a retention pass does before it prunes.
var AppendArchive = appendArchive

// ReadArchiveBytes reads an archive held in memory from seq from.
func ReadArchiveBytes(b []byte, from uint64, fn func(line []byte) error) error {
	return readArchiveFrom(bytes.NewReader(b), "test.jsonl.gz", from, fn)
}

// EncodeMember is one archive member holding lines, events first..last.
var EncodeMember = encodeMember

// ArchiveKey is the kv key holding the archive's committed length.
var ArchiveKey = archiveKey

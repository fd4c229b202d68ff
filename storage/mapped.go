package storage

// Mapped calls fn with the database file's path while bbolt cannot remap
// the file, and returns what fn returns. bbolt reads through a shared,
// read-only mapping of the whole file, and every page a read touched
// stays in the process's resident set (7 MB of a 16 MB file after 10,000
// messages): the caller drops them (lite's memory guard, with
// runtime/pages). A read transaction is held across fn: bbolt remaps only
// once no read transaction is open, so a mapping of the file that fn finds
// is still the one in place when fn drops its pages. Without it, a write
// that grew the file could remap it in between, and the range dropped
// would be whatever was mapped there next, such as the Go heap.
//
// fn must not call Update, which would wait for fn if it had to grow the
// file; reads are fine.
func (s *Store) Mapped(fn func(path string) error) error {
	tx, err := s.db.Begin(false)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	return fn(s.path)
}

package storage

import "github.com/agnx-lite/agnx-lite/runtime/pages"

// DropMapped drops the database's mapped pages from this process's page
// tables: bbolt reads through a shared, read-only mapping of the whole
// file, and every page a read touched stays in the resident set (7 MB of
// a 16 MB file after 10,000 messages). The pages stay in the page cache;
// the next read of one is a minor fault. A read transaction is held
// meanwhile: bbolt cannot remap the file while one is open, so the
// mapping found is the one dropped. It reports the bytes that were
// resident.
func (s *Store) DropMapped() (int64, error) {
	tx, err := s.db.Begin(false)
	if err != nil {
		return 0, err
	}
	defer func() { _ = tx.Rollback() }()
	rs, err := pages.Find(s.path)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, r := range rs {
		n += r.RSS
	}
	return n, pages.Drop(rs)
}

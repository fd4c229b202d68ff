package upkeep

import (
	"sync"

	"github.com/agnx-lite/agnx-lite/runtime/pages"
)

// Most of a daemon's resident set is not its own memory but pages of its
// binary and its database: a start and each turn fault in code and tables
// a few pages at a time, and the kernel maps whole large folios of the
// page cache at each fault, so 13–14 MB of a 17 MB binary stay mapped
// (RssFile) although a turn uses a fraction of them. The memory guard
// drops them from the page tables at every check (package pages): they
// stay in the page cache and come back with a minor fault.

// exePages are this process's read-only mappings of its own executable,
// found once: their addresses are fixed for the life of the process, so no
// other mapping can be in their place when they are dropped.
type exePages struct {
	once   sync.Once
	ranges []pages.Range
	err    error
}

// drop drops the executable's pages from our page tables.
func (p *exePages) drop() error {
	p.once.Do(func() { p.ranges, p.err = pages.Find("/proc/self/exe") })
	if p.err != nil {
		return p.err
	}
	return pages.Drop(p.ranges)
}

// dropDB drops the database's mapped pages from our page tables: bbolt
// reads through a shared, read-only mapping of the whole file, and every
// page a read touched stays resident (7 MB of a 16 MB file after 10,000
// messages). A read transaction is held across Find and Drop
// (storage.Store.Mapped): bbolt cannot remap the file while one is open,
// so the mapping found is the one dropped. It reports the bytes that were
// resident.
func dropDB(db Mapper) (int64, error) {
	var n int64
	err := db.Mapped(func(path string) error {
		rs, err := pages.Find(path)
		if err != nil {
			return err
		}
		for _, r := range rs {
			n += r.RSS
		}
		return pages.Drop(rs)
	})
	return n, err
}

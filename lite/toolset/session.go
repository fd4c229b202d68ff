package toolset

import (
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/tools"
	"github.com/agnx-lite/agnx-lite/storage"
)

// NewSessions is the session tool's view of the database st.
func NewSessions(st *storage.Store) tools.SessionStore { return storeSessions{st} }

// storeSessions lets the session tool read the database.
type storeSessions struct{ st *storage.Store }

func (s storeSessions) Sessions() ([]runtime.SessionInfo, error) { return runtime.ListSessions(s.st) }

func (s storeSessions) Events(id string, after uint64, fn func(runtime.Event) error) error {
	return runtime.ReadEvents(s.st, id, after, fn)
}

// Package tasks owns the task boards: tasks that an agent or a person
// creates, assigns to an agent, prioritises (low, medium, high,
// critical), makes depend on other tasks and moves through todo →
// in_progress → done | cancelled, each with a history of who changed
// what; their storage in agnx.db; each board's Markdown file, which a
// person may edit; and the tasks tool agents use. Starting an agent on a
// task is the composition root's business (lite): Begin and Finish are
// what it calls.
//
// It imports storage and runtime (for runtime.Tool and CallFrom), never
// lite.
//
// # Rules
//
// Ids are T-1, T-2, … per board, never reused. The lifecycle: todo →
// in_progress or cancelled; in_progress → done, cancelled, or back to
// todo (given back); done or cancelled → todo (reopened). A task moves to
// in_progress or done only when every task it depends on is done (a
// cancelled dependency blocks it until removed from its dependencies).
// Dependencies name tasks of the same board, at most 32, without cycles.
// A board holds at most 1000 open tasks; it keeps the last 500 closed
// ones (older ones that no open task depends on are dropped); a task
// keeps the last 50 history entries. History names who made each change:
// "agent:NAME", "person" (the HTTP API, the CLI) or "file" (an edit of
// the board's file).
//
// # Concurrency
//
// Every change is made under one mutex: the board is read, the change
// checked against what is stored now and committed whole (through the
// runtime loop's group commit in the daemon), so two writers never lose
// each other's update. Where they conflict, the second is refused with a
// sentence: a move the task's status no longer allows, or, for a change
// that names the version it was made from (Change.IfVersion, the tool's
// "version"), a task that changed since.
//
// # The board's file
//
// <Dir>/<board>.md (0600) is rendered after every change (a temporary
// file renamed over it). Sync, called on every read and change of the
// board and by lite's timer, costs one lstat when the file did not
// change; when a person changed it, it is parsed and applied as changes
// by "file". The file is read before the store's mutex is taken, without
// ever blocking: only a regular file is opened (non-blocking, no link
// followed, checked on the descriptor), 16 MiB at most; a link, named
// pipe or device in its place is a *FileError, so no board waits on it. The merge is three-way: agnx.db keeps a hash of each field
// as the file was written, so only the fields the person changed are
// applied and a change the store took meanwhile is kept. A file with a
// mistake is not applied at all: Sync returns (and logs once) a
// *FileError "tasks/<board>.md:LINE: what is wrong", and the file is not
// rewritten until the person fixes it; the store stays the truth.
//
// # Caveats
//
// The mutex is per process: the daemon and a CLI working on the same
// file cannot both run (agnx.db's lock excludes the second). Methods wait
// for the loop's commit, so they must not be called on the loop's
// goroutine. A task removed from the file is not deleted (move it under
// Cancelled); start_at and results are not in the file. An edit is
// noticed by the file's modification time and size: one that keeps the
// size within the file system's time granularity of the store's own
// write is seen only with the next change of the file.
package tasks

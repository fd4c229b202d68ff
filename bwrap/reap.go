package bwrap

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Owner is one daemon instance as the owner of the sandboxes it starts,
// so that a sandbox its death leaves behind ends itself, or is ended by
// the next instance.
//
// bwrap's --die-with-parent does not cover its own set-up. The sandbox's
// first process waits for the outer bwrap to let it go, then mounts, and
// arms its parent-death signal only after that, when the outer bwrap may
// be gone already; and killing the outer bwrap while it is still to let
// the first process go leaves that one blocked forever. Killing the
// daemon at random during set-up left a sandbox behind in 43 kills of 150
// on a loaded box (about 1 in 100 in real use). Three things close it:
//
//   - bwrap gets no parent-death signal from us: it arms its own right
//     after creating the sandbox, so a daemon killed before that leaves a
//     bwrap that finishes its set-up and its sandbox, then ends;
//   - the lifeline: a pipe whose write end only the daemon holds; the
//     init, the first thing that runs inside, gets the read end and
//     refuses to run the command when every write end is closed (the
//     daemon is gone);
//   - the marker: bwrap's argv carries the owner's id (an --unsetenv of a
//     variable that does not exist: it changes nothing inside), and the
//     processes bwrap clones keep that argv. A record file in Dir says the
//     owner ran sandboxes; Reap, at the next start, scans /proc only when
//     a record's owner is dead, and kills what carries its marker: the
//     rare sandbox the two others missed (2 kills of 300 on a loaded box,
//     where the daemon died between the init's check and the moment the
//     sandbox's first process armed its signal).
type Owner struct {
	// Dir is where the owner's record goes (<data_dir>/run/sandbox).
	Dir string

	// mu guards start and Close; once started, id, read and write do not
	// change, and Run reads them without it.
	mu     sync.Mutex
	closed bool // Close ran after start: no more sandboxes
	id     string
	read   *os.File // the lifeline's read end, passed to every sandbox
	write  *os.File // the lifeline's write end, never passed on
	err    error
}

// errOwnerClosed is why a Run with an Owner closed before its first
// sandbox cannot start one.
var errOwnerClosed = errors.New("the sandbox owner is closed (the daemon is stopping)")

// lifelineFD is where the lifeline's read end is in bwrap and the init.
const lifelineFD = 3

// markerPrefix starts the variable name that marks a sandbox's argv.
const markerPrefix = "AGNX_SANDBOX_OWNER_"

// start records the owner and opens the lifeline, once: a failure is
// kept and returned again.
func (o *Owner) start() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return errOwnerClosed
	}
	if o.id == "" && o.err == nil {
		o.err = o.record()
	}
	if o.err != nil {
		return fmt.Errorf("record the sandbox owner in %s: %w", o.Dir, o.err)
	}
	return nil
}

// record writes the owner's record and opens the lifeline.
func (o *Owner) record() error {
	id, err := processID(os.Getpid())
	if err != nil {
		return err
	}
	// Several owners may live in one process (a daemon and what it builds
	// on the side): each has its own record.
	id += "_" + strconv.FormatUint(rand.Uint64(), 36)
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(o.Dir, id), nil, 0o600); err != nil {
		return err
	}
	if o.read, o.write, err = os.Pipe(); err != nil {
		return err
	}
	o.id = id
	return nil
}

func (o *Owner) marker() string { return markerPrefix + o.id }

// Close removes the owner's record: no sandbox of it is left. Call it
// once no sandbox of this owner runs any more.
func (o *Owner) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.id == "" || o.err != nil || o.closed {
		return nil
	}
	o.closed = true
	o.read.Close()
	o.write.Close()
	return os.Remove(filepath.Join(o.Dir, o.id))
}

// Reap ends the sandboxes that dead owners recorded in dir left running,
// and removes their records. A live owner's sandboxes are never touched.
// It returns how many processes it killed.
func Reap(dir string) (int, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read sandbox records: %w", err)
	}
	dead := map[string]bool{}
	for _, e := range ents {
		if !ownerAlive(e.Name()) {
			dead[e.Name()] = true
		}
	}
	if len(dead) == 0 {
		return 0, nil
	}
	killed, err := killMarked(dead)
	if err != nil {
		return killed, err
	}
	for id := range dead {
		if err := os.Remove(filepath.Join(dir, id)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return killed, fmt.Errorf("remove sandbox record: %w", err)
		}
	}
	return killed, nil
}

// killMarked kills every process whose argv carries the marker of a dead
// owner. Killing the sandbox's first process ends its pid namespace, and
// everything in it.
func killMarked(dead map[string]bool) (int, error) {
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return 0, fmt.Errorf("list processes: %w", err)
	}
	killed := 0
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		argv, err := os.ReadFile("/proc/" + p.Name() + "/cmdline")
		if err != nil {
			continue // gone, or not ours to read
		}
		id := markedOwner(argv)
		if id == "" || !dead[id] {
			continue
		}
		// A process that is gone, or not ours to kill (another user copied
		// a marker into its argv), is passed over: one of them must not
		// keep the dead owners' records, and their rescans, forever.
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			killed++
		}
	}
	return killed, nil
}

// markedOwner returns the owner id in a NUL-separated argv, if any.
func markedOwner(argv []byte) string {
	for arg := range bytes.SplitSeq(argv, []byte{0}) {
		if id, ok := strings.CutPrefix(string(arg), markerPrefix); ok {
			return id
		}
	}
	return ""
}

// processID names a process uniquely across pid reuse: its pid and its
// start time in clock ticks since boot.
func processID(pid int) (string, error) {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", err
	}
	// The command name (field 2) is in parentheses and may hold spaces;
	// the start time is field 22, the 20th after the closing parenthesis.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return "", fmt.Errorf("unexpected /proc/%d/stat", pid)
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 20 {
		return "", fmt.Errorf("unexpected /proc/%d/stat", pid)
	}
	return strconv.Itoa(pid) + "_" + f[19], nil
}

// ownerAlive tells whether the process a record names (pid_start_tag)
// still runs. A name that is not a record is taken as alive: left alone.
func ownerAlive(id string) bool {
	f := strings.Split(id, "_")
	n, err := strconv.Atoi(f[0])
	if len(f) < 2 || err != nil || n <= 0 {
		return true
	}
	now, err := processID(n)
	if errors.Is(err, os.ErrNotExist) {
		return false
	}
	return err != nil || now == f[0]+"_"+f[1]
}

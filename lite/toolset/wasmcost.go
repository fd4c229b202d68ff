package toolset

import (
	"bufio"
	"bytes"
	"io"
	"os"
	goruntime "runtime"
	"strconv"

	"github.com/agnx-lite/agnx-lite/wasmtools"
)

// What a loaded WASM tool holds for as long as its agent is loaded, which
// the memory guard counts as the agent's fixed cost (lite/upkeep,
// lite/agentcache's agentbudget.go): the machine code wazero's compiler
// made of it, in anonymous executable mappings outside the Go heap, and
// what wazero keeps
// of the module in the heap (all of it on the interpreter). Measured on
// amd64, each shipped Go example (a 3.4–3.6 MB module) holds about 20 MiB
// compiled (13–14 MiB of code, 6.5 of heap) and about 75 MiB interpreted.
//
// It is measured once per module, around its first load: the code
// mappings from /proc/self/maps, exact, and the live heap after a
// collection before and after, so the compile's garbage is not counted.
// Loads of a module already measured reuse its figure, without a
// collection: an agent rebuilt again and again (the LRU, a reload) costs
// nothing more. What other goroutines allocate meanwhile can move the
// heap's part by a little; the figure is an estimate, not an account.

// Held is memory a tool holds: code outside the Go heap, and heap.
type Held struct{ Code, Heap int64 }

// Total is code and heap together.
func (h Held) Total() int64 { return h.Code + h.Heap }

// Holder is a tool that holds memory while it is loaded (a WASM tool);
// the agent cache sums what an agent's tools hold.
type Holder interface{ HeldBytes() Held }

// heldNow is the memory a module's load adds to: this process's anonymous
// executable mappings and its live heap, collected first.
func heldNow() Held {
	goruntime.GC()
	var ms goruntime.MemStats
	goruntime.ReadMemStats(&ms)
	return Held{Code: codeBytes(), Heap: int64(ms.HeapAlloc)}
}

// codeBytes sums the sizes of this process's anonymous executable
// mappings (/proc/self/maps: no file, an x in the permissions), which is
// where wazero puts compiled code; 0 where there is no /proc.
func codeBytes() int64 {
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return 0
	}
	defer f.Close()
	return anonExec(f)
}

// anonExec sums the anonymous executable mappings of a maps file: lines of
// "start-end perms offset dev inode [path]".
func anonExec(r io.Reader) int64 {
	var sum int64
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 512), 64<<10)
	for sc.Scan() {
		fields := bytes.Fields(sc.Bytes())
		if len(fields) < 5 || len(fields[1]) < 3 || fields[1][2] != 'x' || string(fields[4]) != "0" {
			continue
		}
		if len(fields) > 5 && !bytes.HasPrefix(fields[5], []byte("[anon")) {
			continue // [vdso], [vsyscall] and the like are the kernel's
		}
		lo, hi, ok := bytes.Cut(fields[0], []byte("-"))
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(string(lo), 16, 64)
		end, err2 := strconv.ParseUint(string(hi), 16, 64)
		if err1 == nil && err2 == nil && end > start {
			sum += int64(end - start)
		}
	}
	return sum
}

// wasmTool is a loaded WASM tool with what it holds.
type wasmTool struct {
	*wasmtools.Tool
	held Held
}

var _ Holder = (*wasmTool)(nil)

// HeldBytes is what the tool's module held when first loaded.
func (t *wasmTool) HeldBytes() Held { return t.held }

// moduleKey names a module file as it is: a module rebuilt in place is
// measured again.
type moduleKey struct {
	path string
	size int64
	mod  int64
}

// maxMeasured bounds wasmEngine.held: past it the figures are forgotten
// and measured again.
const maxMeasured = 256

// measured runs load and returns the tool with what it holds: measured
// around the load the first time the module is seen, with every other load
// held off, and remembered for its later loads.
func (w *wasmEngine) measured(module string, load func() (*wasmtools.Tool, error)) (*wasmtools.Tool, Held, error) {
	st, err := os.Stat(module)
	if err != nil {
		t, err := load() // which says what is wrong with the file
		return t, Held{}, err
	}
	key := moduleKey{path: module, size: st.Size(), mod: st.ModTime().UnixNano()}
	w.heldMu.RLock()
	h, known := w.held[key]
	if known {
		defer w.heldMu.RUnlock()
		t, err := load()
		return t, h, err
	}
	w.heldMu.RUnlock()
	w.heldMu.Lock()
	defer w.heldMu.Unlock()
	if h, known := w.held[key]; known { // measured while this one waited
		t, err := load()
		return t, h, err
	}
	measure := w.measure
	if measure == nil {
		measure = heldNow
	}
	before := measure()
	t, err := load()
	if err != nil {
		return nil, Held{}, err
	}
	after := measure()
	h = Held{Code: max(after.Code-before.Code, 0), Heap: max(after.Heap-before.Heap, 0)}
	if w.held == nil || len(w.held) >= maxMeasured {
		w.held = make(map[moduleKey]Held)
	}
	w.held[key] = h
	return t, h, nil
}

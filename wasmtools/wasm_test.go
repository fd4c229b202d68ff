package wasmtools

// A few hand-assembled modules: tiny, instant to compile on either engine,
// and able to be wrong in ways no compiler would produce.

func leb(n uint32) []byte {
	var b []byte
	for {
		c := byte(n & 0x7f)
		n >>= 7
		if n == 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

func vec(items ...[]byte) []byte { return cat(leb(uint32(len(items))), cat(items...)) }

func str(s string) []byte { return cat(leb(uint32(len(s))), []byte(s)) }

func section(id byte, items ...[]byte) []byte {
	body := vec(items...)
	return cat([]byte{id}, leb(uint32(len(body))), body)
}

func module(sections ...[]byte) []byte {
	return cat([]byte("\x00asm\x01\x00\x00\x00"), cat(sections...))
}

func body(code ...byte) []byte {
	b := cat([]byte{0}, code) // no locals
	return cat(leb(uint32(len(b))), b)
}

var voidType = []byte{0x60, 0, 0}

// exports are _start (function start) and memory 0.
func exports(start uint32) []byte {
	return section(7, cat(str("_start"), []byte{0}, leb(start)), cat(str("memory"), []byte{2, 0}))
}

// loopWasm spins forever without calling out: only the deadline stops it.
func loopWasm() []byte {
	return module(section(1, voidType), section(3, []byte{0}), section(5, []byte{0, 1}),
		exports(0), section(10, body(0x03, 0x40, 0x0c, 0x00, 0x0b, 0x0b)))
}

// okWasm writes "ok\n" to stdout with one fd_write and returns.
func okWasm() []byte {
	fdWrite := []byte{0x60, 4, 0x7f, 0x7f, 0x7f, 0x7f, 1, 0x7f}
	imp := cat(str("wasi_snapshot_preview1"), str("fd_write"), []byte{0, 0})
	code := body(0x41, 1, 0x41, 0, 0x41, 1, 0x41, 8, 0x10, 0, 0x1a, 0x0b)
	data := cat([]byte{0, 0x41, 0, 0x0b}, str("\x10\x00\x00\x00\x03\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00ok\n"))
	return module(section(1, fdWrite, voidType), section(2, imp), section(3, []byte{1}),
		section(5, []byte{0, 1}), exports(1), section(10, code), section(11, data))
}

// envImportWasm is a command module that also imports env.f, as modules
// built for a JavaScript host do.
func envImportWasm() []byte {
	imp := cat(str("env"), str("f"), []byte{0, 0})
	return module(section(1, voidType), section(2, imp), section(3, []byte{0}), section(5, []byte{0, 1}),
		exports(1), section(10, body(0x0b)))
}

// bigMemoryWasm starts with 2000 pages (125 MiB) of memory.
func bigMemoryWasm() []byte {
	return module(section(1, voidType), section(3, []byte{0}), section(5, cat([]byte{0}, leb(2000))),
		exports(0), section(10, body(0x0b)))
}

// withCustom appends a custom section, which changes the module's bytes
// (and so its identity in wazero's caches) but not what it does.
func withCustom(wasm []byte, name string) []byte {
	payload := str(name)
	return cat(wasm, []byte{0}, leb(uint32(len(payload))), payload)
}

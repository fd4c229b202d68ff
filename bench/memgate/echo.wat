;; echo: the memory gate's WASM tool. A WASI preview 1 command that copies
;; stdin to stdout (the tool's JSON arguments become its answer) in one
;; 64 KiB page of memory. Rebuild with `make echo-wasm` (wat2wasm, wabt).
(module
  (import "wasi_snapshot_preview1" "fd_read"
    (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write"
    (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit"
    (func $proc_exit (param i32)))
  (memory (export "memory") 1 1)

  ;; Layout: iovec {ptr, len} at 0, a count at 8, the buffer at 16.
  (global $buf i32 (i32.const 16))
  (global $cap i32 (i32.const 65520))

  ;; write_all writes n bytes of the buffer to stdout, looping over short
  ;; writes; it exits 1 on an error.
  (func $write_all (param $n i32)
    (local $off i32)
    (block $done
      (loop $more
        (br_if $done (i32.ge_u (local.get $off) (local.get $n)))
        (i32.store (i32.const 0) (i32.add (global.get $buf) (local.get $off)))
        (i32.store (i32.const 4) (i32.sub (local.get $n) (local.get $off)))
        (if (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8))
          (then (call $proc_exit (i32.const 1))))
        (local.set $off (i32.add (local.get $off) (i32.load (i32.const 8))))
        (br $more))))

  (func (export "_start")
    (local $n i32)
    (block $eof
      (loop $more
        (i32.store (i32.const 0) (global.get $buf))
        (i32.store (i32.const 4) (global.get $cap))
        (if (call $fd_read (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 8))
          (then (call $proc_exit (i32.const 1))))
        (local.set $n (i32.load (i32.const 8)))
        (br_if $eof (i32.eqz (local.get $n)))
        (call $write_all (local.get $n))
        (br $more)))))

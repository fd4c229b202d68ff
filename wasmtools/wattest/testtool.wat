;; testtool: the WASI preview 1 command module of the WASM host's tests.
;; Its JSON arguments on stdin select a behaviour, from well-behaved to
;; hostile: {"mode": M, "file": F, "to": T, "n": N, "mb": MB}.
;;
;;   state   prints "calls: 1" (a global counts the calls of this instance)
;;   args    prints argv joined by spaces
;;   env     prints the environment, one K=V a line
;;   json    prints a {"content", "details"} answer
;;   echo    prints stdin back
;;   fail    prints to stdout and stderr, exits 3
;;   loop    spins without calling out until it is stopped
;;   oom     grows its memory 1 MiB at a time until a grow is refused
;;   flood   writes MB MiB to stdout in 64 KiB writes (exit 4 on an error)
;;   read, write, list, mkdir, rename, remove
;;           F (and T) under /workspace; write writes "written"
;;   hammer  reads F N times, prints every distinct content and the failures
;;
;; An error exits 1 with "MODE: F: errno E" on stderr; an unknown mode
;; exits 2. The parser finds "key": value pairs and knows no escapes: the
;; tests send nothing else.
(module
  (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_close" (func $fd_close (param i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_readdir" (func $fd_readdir (param i32 i32 i32 i64 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_prestat_get" (func $fd_prestat_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_prestat_dir_name" (func $fd_prestat_dir_name (param i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_open"
    (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_create_directory" (func $path_create_directory (param i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_rename" (func $path_rename (param i32 i32 i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_unlink_file" (func $path_unlink_file (param i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_remove_directory" (func $path_remove_directory (param i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "args_sizes_get" (func $args_sizes_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "args_get" (func $args_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "environ_sizes_get" (func $environ_sizes_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "environ_get" (func $environ_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))

  ;; Layout: 0 an iovec, 8 a count or fd a call returns, 16 and 20 two
  ;; more, 32 number text, 64 a prestat's name; 0x200 the strings below;
  ;; 0x1000 stdin (12 KiB); 0x4000 a file's or a folder's bytes, or argv
  ;; and environ (16 KiB); 0xc000 a table of (pointer, length) strings and
  ;; 0xd000 their bytes; 0x10000 the flood's 64 KiB.
  (memory (export "memory") 2)
  (global $in i32 (i32.const 0x1000))
  (global $buf i32 (i32.const 0x4000))
  (global $tab i32 (i32.const 0xc000))
  (global $flood i32 (i32.const 0x10000))
  (global $inlen (mut i32) (i32.const 0))
  (global $calls (mut i32) (i32.const 0))
  (global $ws (mut i32) (i32.const -1)) ;; the /workspace preopen
  (global $vp (mut i32) (i32.const 0))  ;; the value $find found
  (global $vn (mut i32) (i32.const 0))
  (global $mp (mut i32) (i32.const 0))  ;; mode
  (global $mn (mut i32) (i32.const 0))
  (global $fp (mut i32) (i32.const 0))  ;; file
  (global $fn (mut i32) (i32.const 0))
  (global $count (mut i32) (i32.const 0)) ;; strings in the table
  (global $top (mut i32) (i32.const 0xd000)) ;; end of their bytes

  ;; NUL-terminated strings, which the code names by their address.
  (data (i32.const 0x200) "mode\00")
  (data (i32.const 0x208) "file\00")
  (data (i32.const 0x210) "to\00")
  (data (i32.const 0x218) "n\00")
  (data (i32.const 0x220) "mb\00")
  (data (i32.const 0x240) "state\00")
  (data (i32.const 0x248) "json\00")
  (data (i32.const 0x250) "env\00")
  (data (i32.const 0x258) "args\00")
  (data (i32.const 0x260) "fail\00")
  (data (i32.const 0x268) "loop\00")
  (data (i32.const 0x270) "oom\00")
  (data (i32.const 0x278) "flood\00")
  (data (i32.const 0x280) "read\00")
  (data (i32.const 0x288) "write\00")
  (data (i32.const 0x290) "list\00")
  (data (i32.const 0x298) "mkdir\00")
  (data (i32.const 0x2a0) "rename\00")
  (data (i32.const 0x2a8) "remove\00")
  (data (i32.const 0x2b0) "hammer\00")
  (data (i32.const 0x2b8) "echo\00")
  (data (i32.const 0x300) "calls: \00")
  (data (i32.const 0x310) "partial output\n\00")
  (data (i32.const 0x330) "something went wrong\n\00")
  (data (i32.const 0x350) "unknown mode \00")
  (data (i32.const 0x360) "fatal error: out of memory\n\00")
  (data (i32.const 0x380) "wrote \00")
  (data (i32.const 0x388) "written\00")
  (data (i32.const 0x390) "/workspace\00")
  (data (i32.const 0x3a0) ": \00")
  (data (i32.const 0x3a8) ": errno \00")
  (data (i32.const 0x3d0) "read [\00")
  (data (i32.const 0x3d8) "], failed \00")
  (data (i32.const 0x3e8) "\"\00")
  (data (i32.const 0x3ea) " \00")
  (data (i32.const 0x3ec) "\n\00")
  (data (i32.const 0x3f0) ".\00")
  (data (i32.const 0x3f2) "..\00")
  (data (i32.const 0x400) "{\"content\": \"hello from json\", \"details\": {\"answer\": 42}}\n\00")

  ;; ---- strings and output

  (func $strlen (param $p i32) (result i32)
    (local $n i32)
    (block $end
      (loop $next
        (br_if $end (i32.eqz (i32.load8_u (i32.add (local.get $p) (local.get $n)))))
        (local.set $n (i32.add (local.get $n) (i32.const 1)))
        (br $next)))
    (local.get $n))

  ;; $write writes n bytes at p to fd, over short writes; it returns the
  ;; errno of a failed write, 0 when all were written.
  (func $write (param $fd i32) (param $p i32) (param $n i32) (result i32)
    (local $errno i32)
    (block $done
      (loop $more
        (br_if $done (i32.le_s (local.get $n) (i32.const 0)))
        (i32.store (i32.const 0) (local.get $p))
        (i32.store (i32.const 4) (local.get $n))
        (local.set $errno (call $fd_write (local.get $fd) (i32.const 0) (i32.const 1) (i32.const 8)))
        (if (local.get $errno) (then (return (local.get $errno))))
        (local.set $p (i32.add (local.get $p) (i32.load (i32.const 8))))
        (local.set $n (i32.sub (local.get $n) (i32.load (i32.const 8))))
        (br $more)))
    (i32.const 0))

  (func $puts (param $fd i32) (param $s i32)
    (drop (call $write (local.get $fd) (local.get $s) (call $strlen (local.get $s)))))

  (func $putn (param $fd i32) (param $v i32)
    (local $p i32)
    (local.set $p (i32.const 64)) ;; digits are written backwards from 64
    (loop $digit
      (local.set $p (i32.sub (local.get $p) (i32.const 1)))
      (i32.store8 (local.get $p) (i32.add (i32.const 48) (i32.rem_u (local.get $v) (i32.const 10))))
      (local.set $v (i32.div_u (local.get $v) (i32.const 10)))
      (br_if $digit (local.get $v)))
    (drop (call $write (local.get $fd) (local.get $p) (i32.sub (i32.const 64) (local.get $p)))))

  ;; $same reports whether n bytes at a and b are equal.
  (func $same (param $a i32) (param $b i32) (param $n i32) (result i32)
    (local $i i32)
    (block $differ
      (loop $next
        (if (i32.ge_u (local.get $i) (local.get $n)) (then (return (i32.const 1))))
        (br_if $differ (i32.ne (i32.load8_u (i32.add (local.get $a) (local.get $i)))
                               (i32.load8_u (i32.add (local.get $b) (local.get $i)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (i32.const 0))

  ;; $is reports whether the n bytes at p are the NUL-terminated s.
  (func $is (param $p i32) (param $n i32) (param $s i32) (result i32)
    (if (i32.ne (local.get $n) (call $strlen (local.get $s))) (then (return (i32.const 0))))
    (call $same (local.get $p) (local.get $s) (local.get $n)))

  ;; $less orders two byte strings as Go's < does.
  (func $less (param $a i32) (param $an i32) (param $b i32) (param $bn i32) (result i32)
    (local $i i32) (local $x i32) (local $y i32)
    (block $prefix
      (loop $next
        (br_if $prefix (i32.ge_u (local.get $i) (local.get $an)))
        (br_if $prefix (i32.ge_u (local.get $i) (local.get $bn)))
        (local.set $x (i32.load8_u (i32.add (local.get $a) (local.get $i))))
        (local.set $y (i32.load8_u (i32.add (local.get $b) (local.get $i))))
        (if (i32.ne (local.get $x) (local.get $y)) (then (return (i32.lt_u (local.get $x) (local.get $y)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (i32.lt_u (local.get $an) (local.get $bn)))

  ;; ---- the table of strings: list's names, hammer's contents

  (func $add (param $p i32) (param $n i32)
    (local $i i32)
    (i32.store (i32.add (global.get $tab) (i32.shl (global.get $count) (i32.const 3))) (global.get $top))
    (i32.store (i32.add (global.get $tab) (i32.add (i32.shl (global.get $count) (i32.const 3)) (i32.const 4))) (local.get $n))
    (block $end
      (loop $copy
        (br_if $end (i32.ge_u (local.get $i) (local.get $n)))
        (i32.store8 (i32.add (global.get $top) (local.get $i)) (i32.load8_u (i32.add (local.get $p) (local.get $i))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $copy)))
    (global.set $top (i32.add (global.get $top) (local.get $n)))
    (global.set $count (i32.add (global.get $count) (i32.const 1))))

  ;; $has reports whether the table holds the n bytes at p.
  (func $has (param $p i32) (param $n i32) (result i32)
    (local $i i32) (local $e i32)
    (block $end
      (loop $next
        (br_if $end (i32.ge_u (local.get $i) (global.get $count)))
        (local.set $e (i32.add (global.get $tab) (i32.shl (local.get $i) (i32.const 3))))
        (if (i32.eq (i32.load offset=4 (local.get $e)) (local.get $n))
          (then (if (call $same (i32.load (local.get $e)) (local.get $p) (local.get $n))
            (then (return (i32.const 1))))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (i32.const 0))

  ;; $sort sorts the table by insertion.
  (func $sort
    (local $i i32) (local $j i32) (local $a i32) (local $p i32) (local $n i32)
    (local.set $i (i32.const 1))
    (block $done
      (loop $outer
        (br_if $done (i32.ge_u (local.get $i) (global.get $count)))
        (local.set $a (i32.add (global.get $tab) (i32.shl (local.get $i) (i32.const 3))))
        (local.set $p (i32.load (local.get $a)))
        (local.set $n (i32.load offset=4 (local.get $a)))
        (local.set $j (local.get $i))
        (block $placed
          (loop $inner
            (br_if $placed (i32.eqz (local.get $j)))
            ;; $a is the entry before the j-th
            (local.set $a (i32.add (global.get $tab) (i32.shl (i32.sub (local.get $j) (i32.const 1)) (i32.const 3))))
            (br_if $placed (i32.eqz (call $less (local.get $p) (local.get $n)
              (i32.load (local.get $a)) (i32.load offset=4 (local.get $a)))))
            (i64.store offset=8 (local.get $a) (i64.load (local.get $a)))
            (local.set $j (i32.sub (local.get $j) (i32.const 1)))
            (br $inner)))
        (local.set $a (i32.add (global.get $tab) (i32.shl (local.get $j) (i32.const 3))))
        (i32.store (local.get $a) (local.get $p))
        (i32.store offset=4 (local.get $a) (local.get $n))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $outer))))

  ;; ---- arguments

  (func $readstdin
    (block $eof
      (loop $more
        (i32.store (i32.const 0) (i32.add (global.get $in) (global.get $inlen)))
        (i32.store (i32.const 4) (i32.sub (i32.const 0x3000) (global.get $inlen)))
        (br_if $eof (i32.eqz (i32.load (i32.const 4))))
        (br_if $eof (call $fd_read (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 8)))
        (br_if $eof (i32.eqz (i32.load (i32.const 8))))
        (global.set $inlen (i32.add (global.get $inlen) (i32.load (i32.const 8))))
        (br $more))))

  (func $at (param $i i32) (result i32)
    (if (result i32) (i32.lt_u (local.get $i) (global.get $inlen))
      (then (i32.load8_u (i32.add (global.get $in) (local.get $i))))
      (else (i32.const 0))))

  (func $skipspace (param $i i32) (result i32)
    (block $end
      (loop $next
        (br_if $end (i32.and (i32.ne (call $at (local.get $i)) (i32.const 32))
                             (i32.ne (call $at (local.get $i)) (i32.const 10))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (local.get $i))

  ;; $find looks for "key": value on stdin and sets $vp and $vn to the
  ;; value: a string's bytes between its quotes, or a number's digits.
  (func $find (param $key i32) (result i32)
    (local $i i32) (local $j i32) (local $k i32)
    (local.set $k (call $strlen (local.get $key)))
    (block $none
      (loop $next
        (br_if $none (i32.ge_u (local.get $i) (global.get $inlen)))
        (local.set $j (i32.add (local.get $i) (i32.add (local.get $k) (i32.const 2))))
        (if (i32.and (i32.eq (call $at (local.get $i)) (i32.const 34))
                     (i32.eq (call $at (i32.sub (local.get $j) (i32.const 1))) (i32.const 34)))
          (then (if (call $same (i32.add (global.get $in) (i32.add (local.get $i) (i32.const 1))) (local.get $key) (local.get $k))
            (then
              (local.set $j (call $skipspace (local.get $j)))
              (if (i32.eq (call $at (local.get $j)) (i32.const 58))
                (then (return (call $value (call $skipspace (i32.add (local.get $j) (i32.const 1)))))))))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (i32.const 0))

  (func $value (param $i i32) (result i32)
    (local $j i32)
    (if (i32.eq (call $at (local.get $i)) (i32.const 34))
      (then
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (local.set $j (local.get $i))
        (block $end
          (loop $next
            (br_if $end (i32.ge_u (local.get $j) (global.get $inlen)))
            (br_if $end (i32.eq (call $at (local.get $j)) (i32.const 34)))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br $next))))
      (else
        (local.set $j (local.get $i))
        (block $end
          (loop $next
            (br_if $end (i32.gt_u (i32.sub (call $at (local.get $j)) (i32.const 48)) (i32.const 9)))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br $next)))))
    (global.set $vp (i32.add (global.get $in) (local.get $i)))
    (global.set $vn (i32.sub (local.get $j) (local.get $i)))
    (i32.const 1))

  ;; $number is the number of "key", 0 when there is none.
  (func $number (param $key i32) (result i32)
    (local $i i32) (local $v i32)
    (if (i32.eqz (call $find (local.get $key))) (then (return (i32.const 0))))
    (block $end
      (loop $next
        (br_if $end (i32.ge_u (local.get $i) (global.get $vn)))
        (local.set $v (i32.add (i32.mul (local.get $v) (i32.const 10))
          (i32.sub (i32.load8_u (i32.add (global.get $vp) (local.get $i))) (i32.const 48))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (local.get $v))

  ;; ---- the workspace

  ;; $findws sets $ws to the preopen named /workspace, if there is one.
  (func $findws
    (local $fd i32)
    (local.set $fd (i32.const 3))
    (block $end
      (loop $next
        (br_if $end (call $fd_prestat_get (local.get $fd) (i32.const 16)))
        (if (i32.eq (i32.load (i32.const 20)) (i32.const 10))
          (then
            (drop (call $fd_prestat_dir_name (local.get $fd) (i32.const 64) (i32.const 10)))
            (if (call $same (i32.const 64) (i32.const 0x390) (i32.const 10))
              (then (global.set $ws (local.get $fd)) (return)))))
        (local.set $fd (i32.add (local.get $fd) (i32.const 1)))
        (br $next))))

  ;; $die reports errno for the mode and its file, and exits 1.
  (func $die (param $errno i32)
    (drop (call $write (i32.const 2) (global.get $mp) (global.get $mn)))
    (call $puts (i32.const 2) (i32.const 0x3a0))
    (drop (call $write (i32.const 2) (global.get $fp) (global.get $fn)))
    (call $puts (i32.const 2) (i32.const 0x3a8))
    (call $putn (i32.const 2) (local.get $errno))
    (call $puts (i32.const 2) (i32.const 0x3ec))
    (call $proc_exit (i32.const 1)))

  ;; $open opens the file under /workspace (following links, as Go's os
  ;; does) and returns the errno; the descriptor is at 8.
  (func $open (param $oflags i32) (param $rights i64) (result i32)
    (call $path_open (global.get $ws) (i32.const 1) (global.get $fp) (global.get $fn)
      (local.get $oflags) (local.get $rights) (i64.const 0) (i32.const 0) (i32.const 8)))

  ;; $slurp reads the file into $buf (16 KiB at most: the tests' files
  ;; are small) and returns its length, or minus the errno of a failure.
  (func $slurp (result i32)
    (local $fd i32) (local $n i32) (local $errno i32)
    (local.set $errno (call $open (i32.const 0) (i64.const 2))) ;; the right to read
    (if (local.get $errno) (then (return (i32.sub (i32.const 0) (local.get $errno)))))
    (local.set $fd (i32.load (i32.const 8)))
    (block $end
      (loop $more
        (i32.store (i32.const 0) (i32.add (global.get $buf) (local.get $n)))
        (i32.store (i32.const 4) (i32.sub (i32.const 0x4000) (local.get $n)))
        (br_if $end (i32.eqz (i32.load (i32.const 4))))
        (local.set $errno (call $fd_read (local.get $fd) (i32.const 0) (i32.const 1) (i32.const 8)))
        (if (local.get $errno) (then
          (drop (call $fd_close (local.get $fd)))
          (return (i32.sub (i32.const 0) (local.get $errno)))))
        (br_if $end (i32.eqz (i32.load (i32.const 8))))
        (local.set $n (i32.add (local.get $n) (i32.load (i32.const 8))))
        (br $more)))
    (drop (call $fd_close (local.get $fd)))
    (local.get $n))

  ;; ---- the modes

  (func $vars (param $sep i32)
    (local $i i32) (local $count i32)
    (local.set $count (i32.load (i32.const 16)))
    (block $end
      (loop $next
        (br_if $end (i32.ge_u (local.get $i) (local.get $count)))
        (if (local.get $i) (then (call $puts (i32.const 1) (local.get $sep))))
        (call $puts (i32.const 1) (i32.load (i32.add (global.get $tab) (i32.shl (local.get $i) (i32.const 2)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (call $puts (i32.const 1) (i32.const 0x3ec)))

  (func $oom
    (local $page i32) (local $end i32)
    (loop $grow
      (local.set $page (memory.grow (i32.const 16)))
      (if (i32.eq (local.get $page) (i32.const -1))
        (then
          (call $puts (i32.const 2) (i32.const 0x360))
          (call $proc_exit (i32.const 2))))
      ;; one write a 64 KiB page: the cap is on memory.grow
      (local.set $end (i32.add (local.get $page) (i32.const 16)))
      (loop $touch
        (i32.store8 (i32.shl (local.get $page) (i32.const 16)) (i32.const 1))
        (local.set $page (i32.add (local.get $page) (i32.const 1)))
        (br_if $touch (i32.lt_u (local.get $page) (local.get $end))))
      (br $grow)))

  (func $floodout
    (local $i i32) (local $n i32)
    (loop $fill
      (i32.store8 (i32.add (global.get $flood) (local.get $i)) (i32.const 120))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $fill (i32.lt_u (local.get $i) (i32.const 0xffff))))
    (i32.store8 (i32.add (global.get $flood) (i32.const 0xffff)) (i32.const 10))
    (local.set $n (i32.mul (call $number (i32.const 0x220)) (i32.const 16)))
    (local.set $i (i32.const 0))
    (block $end
      (loop $next
        (br_if $end (i32.ge_u (local.get $i) (local.get $n)))
        (if (call $write (i32.const 1) (global.get $flood) (i32.const 0x10000))
          (then (call $proc_exit (i32.const 4))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next))))

  (func $read
    (local $n i32)
    (local.set $n (call $slurp))
    (if (i32.lt_s (local.get $n) (i32.const 0)) (then (call $die (i32.sub (i32.const 0) (local.get $n)))))
    (drop (call $write (i32.const 1) (global.get $buf) (local.get $n))))

  (func $writefile
    (local $fd i32) (local $errno i32)
    ;; O_CREAT|O_TRUNC with the right to write: os.WriteFile's open
    (local.set $errno (call $open (i32.const 9) (i64.const 64)))
    (if (local.get $errno) (then (call $die (local.get $errno))))
    (local.set $fd (i32.load (i32.const 8)))
    (local.set $errno (call $write (local.get $fd) (i32.const 0x388) (i32.const 7)))
    (if (local.get $errno) (then (call $die (local.get $errno))))
    (drop (call $fd_close (local.get $fd)))
    (call $puts (i32.const 1) (i32.const 0x380))
    (drop (call $write (i32.const 1) (global.get $fp) (global.get $fn)))
    (call $puts (i32.const 1) (i32.const 0x3ec)))

  ;; $list prints the folder's names but . and .., sorted as Go's
  ;; os.ReadDir sorts them.
  (func $list
    (local $fd i32) (local $errno i32) (local $used i32) (local $off i32) (local $e i32)
    (local $n i32) (local $cookie i64)
    (local.set $errno (call $open (i32.const 2) (i64.const 0x4000))) ;; O_DIRECTORY, fd_readdir
    (if (local.get $errno) (then (call $die (local.get $errno))))
    (local.set $fd (i32.load (i32.const 8)))
    (block $done
      (loop $batch
        (local.set $errno (call $fd_readdir (local.get $fd) (global.get $buf) (i32.const 0x4000)
          (local.get $cookie) (i32.const 8)))
        (if (local.get $errno) (then (call $die (local.get $errno))))
        (local.set $used (i32.load (i32.const 8)))
        (local.set $off (i32.const 0))
        (block $partial
          (loop $entry
            ;; a dirent: d_next u64, d_ino u64, d_namlen u32, d_type u8, name at 24
            (br_if $partial (i32.gt_u (i32.add (local.get $off) (i32.const 24)) (local.get $used)))
            (local.set $e (i32.add (global.get $buf) (local.get $off)))
            (local.set $n (i32.load offset=16 (local.get $e)))
            (br_if $partial (i32.gt_u (i32.add (local.get $off) (i32.add (i32.const 24) (local.get $n))) (local.get $used)))
            (local.set $cookie (i64.load (local.get $e)))
            (if (i32.eqz (i32.or (call $is (i32.add (local.get $e) (i32.const 24)) (local.get $n) (i32.const 0x3f0))
                                 (call $is (i32.add (local.get $e) (i32.const 24)) (local.get $n) (i32.const 0x3f2))))
              (then (call $add (i32.add (local.get $e) (i32.const 24)) (local.get $n))))
            (local.set $off (i32.add (local.get $off) (i32.add (i32.const 24) (local.get $n))))
            (br $entry)))
        (br_if $done (i32.lt_u (local.get $used) (i32.const 0x4000)))
        (br $batch)))
    (drop (call $fd_close (local.get $fd)))
    (call $sort)
    (local.set $e (global.get $tab))
    (block $end
      (loop $print
        (br_if $end (i32.ge_u (local.get $e) (i32.add (global.get $tab) (i32.shl (global.get $count) (i32.const 3)))))
        (drop (call $write (i32.const 1) (i32.load (local.get $e)) (i32.load offset=4 (local.get $e))))
        (call $puts (i32.const 1) (i32.const 0x3ec))
        (local.set $e (i32.add (local.get $e) (i32.const 8)))
        (br $print))))

  ;; $hammer reads the file n times and prints every distinct content it
  ;; saw, for the race test: a read that ever sees what lies outside the
  ;; workspace shows it here.
  (func $hammer
    (local $i i32) (local $n i32) (local $len i32) (local $failed i32) (local $e i32)
    (local.set $n (call $number (i32.const 0x218)))
    (block $end
      (loop $next
        (br_if $end (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $len (call $slurp))
        (if (i32.lt_s (local.get $len) (i32.const 0))
          (then (local.set $failed (i32.add (local.get $failed) (i32.const 1))))
          (else (if (i32.eqz (call $has (global.get $buf) (local.get $len)))
            (then (call $add (global.get $buf) (local.get $len))))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (call $sort)
    (call $puts (i32.const 1) (i32.const 0x3d0))
    (local.set $e (global.get $tab))
    (block $end
      (loop $print
        (br_if $end (i32.ge_u (local.get $e) (i32.add (global.get $tab) (i32.shl (global.get $count) (i32.const 3)))))
        (if (i32.ne (local.get $e) (global.get $tab)) (then (call $puts (i32.const 1) (i32.const 0x3ea))))
        (call $puts (i32.const 1) (i32.const 0x3e8))
        (drop (call $write (i32.const 1) (i32.load (local.get $e)) (i32.load offset=4 (local.get $e))))
        (call $puts (i32.const 1) (i32.const 0x3e8))
        (local.set $e (i32.add (local.get $e) (i32.const 8)))
        (br $print)))
    (call $puts (i32.const 1) (i32.const 0x3d8))
    (call $putn (i32.const 1) (local.get $failed))
    (call $puts (i32.const 1) (i32.const 0x3ec)))

  ;; $remove unlinks a file, or failing that removes a folder, as Go's
  ;; os.Remove does.
  (func $remove (result i32)
    (local $errno i32) (local $dir i32)
    (local.set $errno (call $path_unlink_file (global.get $ws) (global.get $fp) (global.get $fn)))
    (if (i32.eqz (local.get $errno)) (then (return (i32.const 0))))
    (local.set $dir (call $path_remove_directory (global.get $ws) (global.get $fp) (global.get $fn)))
    (if (i32.eqz (local.get $dir)) (then (return (i32.const 0))))
    (if (i32.ne (local.get $dir) (i32.const 54)) (then (return (local.get $dir)))) ;; ENOTDIR
    (local.get $errno))

  (func $files (result i32)
    (if (call $is (global.get $mp) (global.get $mn) (i32.const 0x298))
      (then (return (call $path_create_directory (global.get $ws) (global.get $fp) (global.get $fn)))))
    (if (call $is (global.get $mp) (global.get $mn) (i32.const 0x2a0))
      (then
        (drop (call $find (i32.const 0x210)))
        (return (call $path_rename (global.get $ws) (global.get $fp) (global.get $fn)
          (global.get $ws) (global.get $vp) (global.get $vn)))))
    (call $remove))

  (func $spin
    (loop $forever
      (global.set $calls (i32.add (global.get $calls) (i32.const 1)))
      (br $forever)))

  (func $mode (param $s i32) (result i32)
    (call $is (global.get $mp) (global.get $mn) (local.get $s)))

  (func (export "_start")
    (local $errno i32)
    (call $readstdin)
    (global.set $calls (i32.add (global.get $calls) (i32.const 1)))
    (if (call $find (i32.const 0x200))
      (then (global.set $mp (global.get $vp)) (global.set $mn (global.get $vn))))
    (if (call $find (i32.const 0x208))
      (then (global.set $fp (global.get $vp)) (global.set $fn (global.get $vn))))
    (call $findws)
    (if (call $mode (i32.const 0x240)) (then
      (call $puts (i32.const 1) (i32.const 0x300))
      (call $putn (i32.const 1) (global.get $calls))
      (call $puts (i32.const 1) (i32.const 0x3ec))
      (return)))
    (if (call $mode (i32.const 0x248)) (then (call $puts (i32.const 1) (i32.const 0x400)) (return)))
    (if (call $mode (i32.const 0x250)) (then
      (drop (call $environ_sizes_get (i32.const 16) (i32.const 20)))
      (drop (call $environ_get (global.get $tab) (global.get $buf)))
      (call $vars (i32.const 0x3ec))
      (return)))
    (if (call $mode (i32.const 0x258)) (then
      (drop (call $args_sizes_get (i32.const 16) (i32.const 20)))
      (drop (call $args_get (global.get $tab) (global.get $buf)))
      (call $vars (i32.const 0x3ea))
      (return)))
    (if (call $mode (i32.const 0x2b8)) (then
      (drop (call $write (i32.const 1) (global.get $in) (global.get $inlen)))
      (return)))
    (if (call $mode (i32.const 0x260)) (then
      (call $puts (i32.const 1) (i32.const 0x310))
      (call $puts (i32.const 2) (i32.const 0x330))
      (call $proc_exit (i32.const 3))))
    (if (call $mode (i32.const 0x268)) (then (call $spin)))
    (if (call $mode (i32.const 0x270)) (then (call $oom)))
    (if (call $mode (i32.const 0x278)) (then (call $floodout) (return)))
    (if (call $mode (i32.const 0x280)) (then (call $read) (return)))
    (if (call $mode (i32.const 0x288)) (then (call $writefile) (return)))
    (if (call $mode (i32.const 0x290)) (then (call $list) (return)))
    (if (call $mode (i32.const 0x2b0)) (then (call $hammer) (return)))
    (if (i32.or (call $mode (i32.const 0x298))
          (i32.or (call $mode (i32.const 0x2a0)) (call $mode (i32.const 0x2a8))))
      (then
        (local.set $errno (call $files))
        (if (local.get $errno) (then (call $die (local.get $errno))))
        (return)))
    (call $puts (i32.const 2) (i32.const 0x350))
    (drop (call $write (i32.const 2) (global.get $mp) (global.get $mn)))
    (call $puts (i32.const 2) (i32.const 0x3ec))
    (call $proc_exit (i32.const 2))))

// Package testenv tells tests what the machine they run on can do: under
// user-mode emulation (ci/test-qemu.sh), whether a test binary can
// re-execute itself, and where the module's root is.
package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

// Emulated reports whether the test runs under qemu's user-mode emulation:
// ci/qemu-exec.sh sets AGNX_EMULATED to the emulator.
func Emulated() bool { return os.Getenv("AGNX_EMULATED") != "" }

// SkipIfNoReexec skips a test that re-executes its own binary (a crash
// test's child, bwrap's init) where the kernel cannot run it: under
// emulation, a foreign ELF runs only through qemu's binfmt_misc handler,
// which ci/test-qemu.sh registers where it can (setting AGNX_REEXEC) and
// otherwise explains in AGNX_NO_REEXEC. why says what the test re-executes.
func SkipIfNoReexec(t testing.TB, why string) {
	t.Helper()
	if !Emulated() || os.Getenv("AGNX_REEXEC") != "" {
		return
	}
	reason := os.Getenv("AGNX_NO_REEXEC")
	if reason == "" {
		reason = "run through ci/test-qemu.sh, which registers qemu's binfmt_misc handler where it can"
	}
	t.Skip(why + ": under user-mode emulation the host kernel runs it only through qemu's binfmt_misc handler: " + reason)
}

// LoneUID is a uid that no other process runs as, for a test's fork
// bomb under a root test run: RLIMIT_NPROC counts every process of a
// uid, so a bomb run as nobody would starve every other sandbox running
// as nobody meanwhile, in this test binary or in another one (make test
// runs two lanes of tests at once). It is derived from the pid, which no
// two live test binaries share.
func LoneUID() uint32 { return uint32(1_000_000 + os.Getpid()) }

// ModuleRoot is the folder of go.mod, found from the test's folder
// upward: where the generated pages and the sources they are made from
// are.
func ModuleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatalf("testenv: the test's folder is unknown: %v", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatalf("testenv: no go.mod above the test's folder; run the test inside the module")
		}
		dir = up
	}
}

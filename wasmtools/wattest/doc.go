// Package wattest gives tests of the WASM host small WebAssembly modules
// written by hand in the text format: testtool.wat, a WASI command with a
// behaviour for each thing the host must handle (its environment, exit
// codes, a loop, a memory or output flood, the workspace's files). A
// module built from Go for wasip1 is 3.5 MB that wazero takes tens of
// seconds to compile under -race, and longer under qemu; these are a few
// KB and compile at once, so a test of the host pays only for the host.
//
// The modules are compiled with wat2wasm (Debian package wabt) once per
// test binary. Where wat2wasm is missing a test skips, and fails when the
// environment has CI=true, with the command that installs it.
//
// wattest imports only the standard library; it is imported by tests
// alone, never by the daemon.
package wattest

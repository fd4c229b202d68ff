// Package wasmtools will run agents' WebAssembly tools with wazero: a
// compile cache on disk, the tool manifest, and memory, time and mount
// limits. It imports wazero and the standard library only.
//
// It is empty until WASM tools land (the "WASM tools with wazero" issue);
// agents that declare a tool of type wasm are refused at load with a
// sentence saying so.
package wasmtools

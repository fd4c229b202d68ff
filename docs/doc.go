// Package docs holds no code: the folder is agnx-lite's manual (README.md
// at the top, the pages under docs/), and this package only its tests.
//
// The tests keep the manual honest where prose cannot keep itself:
//
//   - every relative link in the repository's Markdown (test data aside)
//     names a file that exists, and every #anchor a heading of its target
//     as GitHub makes anchors (links_test.go);
//   - every figure the manual states about the project's budgets — the
//     memory gate, the linux/arm64 binary size line, the time of a whole
//     CI run — is the one its source of truth holds: the const in
//     bench/memgate/main.go, the line in ci/cross.sh, the line in
//     ci/test.sh (budgets_test.go);
//   - nothing the code builds is called "not in this build yet"
//     (notyet_test.go).
//
// It imports nothing of the project: the sources of truth are read as
// text (Go through go/parser, scripts line by line), so the tests build
// in a second and say which file to fix.
package docs

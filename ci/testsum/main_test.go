package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stream is go test -json output, cut down: a pass, a subtest skipped
// with a reason, a failure and a package that did not build.
const stream = `{"Action":"start","Package":"ex/a"}
{"Action":"run","Package":"ex/a","Test":"TestOK"}
{"Action":"output","Package":"ex/a","Test":"TestOK","Output":"=== RUN   TestOK\n"}
{"Action":"output","Package":"ex/a","Test":"TestOK","Output":"--- PASS: TestOK (0.00s)\n"}
{"Action":"pass","Package":"ex/a","Test":"TestOK","Elapsed":0.5}
{"Action":"run","Package":"ex/a","Test":"TestCrash"}
{"Action":"output","Package":"ex/a","Test":"TestCrash","Output":"=== RUN   TestCrash\n"}
{"Action":"output","Package":"ex/a","Test":"TestCrash","Output":"    crash_test.go:21: re-executes the test binary: not under user-mode emulation\n"}
{"Action":"output","Package":"ex/a","Test":"TestCrash","Output":"--- SKIP: TestCrash (0.00s)\n"}
{"Action":"skip","Package":"ex/a","Test":"TestCrash","Elapsed":0}
{"Action":"run","Package":"ex/a","Test":"TestBad"}
{"Action":"output","Package":"ex/a","Test":"TestBad","Output":"=== RUN   TestBad\n"}
{"Action":"output","Package":"ex/a","Test":"TestBad","Output":"    bad_test.go:9: want 2, got 3\n"}
{"Action":"output","Package":"ex/a","Test":"TestBad","Output":"--- FAIL: TestBad (0.00s)\n"}
{"Action":"fail","Package":"ex/a","Test":"TestBad","Elapsed":2}
{"Action":"output","Package":"ex/a","Output":"FAIL\n"}
{"Action":"output","Package":"ex/a","Output":"FAIL\tex/a\t0.01s\n"}
{"Action":"fail","Package":"ex/a","Elapsed":0.01}
{"Action":"run","Package":"ex/c","Test":"TestHang"}
{"Action":"output","Package":"ex/c","Test":"TestHang","Output":"=== RUN   TestHang\n"}
{"Action":"output","Package":"ex/c","Test":"TestHang","Output":"panic: test timed out after 10m0s\n"}
{"Action":"output","Package":"ex/c","Output":"FAIL\tex/c\t600.1s\n"}
{"Action":"fail","Package":"ex/c","Elapsed":600.1}
{"ImportPath":"ex/b [ex/b.test]","Action":"build-output","Output":"b_test.go:3:2: undefined: x\n"}
{"ImportPath":"ex/b [ex/b.test]","Action":"build-fail"}
{"Action":"output","Package":"ex/b","Output":"FAIL\tex/b [build failed]\n"}
{"Action":"fail","Package":"ex/b","Elapsed":0,"FailedBuild":"ex/b [ex/b.test]"}
`

func TestRead(t *testing.T) {
	var out strings.Builder
	tl, err := read(strings.NewReader(stream), &out)
	require.NoError(t, err)
	assert.Equal(t, 1, tl.passed)
	assert.Equal(t, 1, tl.failed)
	assert.Equal(t, 1, tl.skipped)
	assert.Equal(t, 1, tl.buildFailed)
	assert.Equal(t, 1, tl.crashed, "ex/c's timeout: no test of it failed")
	assert.Equal(t, map[string]int{"re-executes the test binary: not under user-mode emulation": 1}, tl.reasons)
	assert.Contains(t, out.String(), "bad_test.go:9: want 2, got 3", "a failure's output is shown")
	assert.Contains(t, out.String(), "b_test.go:3:2: undefined: x", "build errors are shown")
	assert.Contains(t, out.String(), "=== RUN   TestHang\npanic: test timed out", "a timeout shows the test that hung")
	assert.Contains(t, out.String(), "FAIL\tex/a\t0.01s\n")
	assert.NotContains(t, out.String(), "TestOK", "a passing test is quiet")
	assert.Equal(t, "skipped tests by reason:\n"+
		"    1  re-executes the test binary: not under user-mode emulation\n"+
		"failed tests (package, test, times):\n"+
		"  ex/a TestBad  1×\n"+
		"testsum: arm64: 2 tests ran (1 passed, 1 failed), 1 skipped, 1 packages did not build, "+
		"1 packages failed outside any test (a crash or a timeout: see their output)\n",
		tl.summary("arm64"))
	assert.Equal(t, "slowest tests:\n        2s  ex/a TestBad\n", tl.slowest(1))
	assert.Empty(t, tl.slowest(0))
}

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/agnx-lite/agnx-lite/runtime/hostfacts"
)

// floorFigures are the Go floor's (bench/floor) figures, measured with
// the code that measures agnx-lite.
type floorFigures struct {
	readyMedian time.Duration
	idle        hostfacts.Mem
	arm64Size   int64
}

// floorLDFlags are make cross's linker flags without the version stamp,
// which the floor has no variable for.
const floorLDFlags = "-s -w"

// measureFloor builds bench/floor for this machine and for linux/arm64
// the way make cross builds agnx-lite, starts it `starts` times for its
// ready median and samples its idle memory after the last start.
func measureFloor(goBin string, starts int) (*floorFigures, error) {
	dir, err := os.MkdirTemp("", "agnx-bench-floor-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	host, arm64 := filepath.Join(dir, "floor"), filepath.Join(dir, "floor-linux-arm64")
	if err := buildFloor(goBin, host, nil); err != nil {
		return nil, err
	}
	if err := buildFloor(goBin, arm64, []string{"GOOS=linux", "GOARCH=arm64"}); err != nil {
		return nil, err
	}
	f := &floorFigures{}
	st, err := os.Stat(arm64)
	if err != nil {
		return nil, err
	}
	f.arm64Size = st.Size()
	var readies []time.Duration
	for i := range starts {
		s, err := startServe(daemonCmd{bin: host}, []string{"PATH=" + os.Getenv("PATH")})
		if err != nil {
			return nil, fmt.Errorf("floor: %w", err)
		}
		readies = append(readies, s.ready)
		if i == starts-1 {
			time.Sleep(settle) // as agnx-lite's idle sample: nothing signals "settled"
			f.idle, err = readMem(s.cmd.Process.Pid)
		}
		if stopErr := s.stop(); err == nil {
			err = stopErr
		}
		if err != nil {
			return nil, fmt.Errorf("floor: %w", err)
		}
	}
	slices.Sort(readies)
	f.readyMedian = readies[len(readies)/2]
	return f, nil
}

func buildFloor(goBin, out string, target []string) error {
	cmd := exec.Command(goBin, "build", "-trimpath", "-ldflags", floorLDFlags, "-o", out, "./bench/floor")
	cmd.Env = append(append(os.Environ(), "CGO_ENABLED=0"), target...)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build the floor %v: %v: %s", target, err, b)
	}
	return nil
}

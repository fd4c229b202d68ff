package hostfacts

import (
	"bytes"
	"context"
	"os"

	"github.com/shirou/gopsutil/v4/cpu"
	"golang.org/x/sys/unix"
)

// Model names the machine, for a benchmark's report: the board where
// the device tree names one ("Raspberry Pi 4 Model B Rev 1.4"), else the
// CPU's model (gopsutil: /proc/cpuinfo), else "unknown". The board is a
// direct read of /sys/firmware/devicetree/base/model: gopsutil gives
// ARM boards only their cores' name ("Cortex-A72").
func (r *Reader) Model(ctx context.Context) string {
	if data, err := os.ReadFile(r.sys("firmware/devicetree/base/model")); err == nil {
		if board := string(bytes.TrimSpace(bytes.TrimRight(data, "\x00"))); board != "" {
			return board
		}
	}
	infos, _ := cpu.InfoWithContext(r.ctx(ctx))
	for _, c := range infos {
		if c.ModelName != "" && c.ModelName != "Undefined" {
			return c.ModelName
		}
	}
	return "unknown"
}

// Kernel is the kernel's release ("6.8.0-45-generic"), from uname(2).
// Not gopsutil's host.KernelVersion, though it makes the same call: its
// package compiles three regular expressions at init, which every start
// of the daemon would pay for once it is imported here.
func Kernel() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "unknown"
	}
	return unix.ByteSliceToString(u.Release[:])
}

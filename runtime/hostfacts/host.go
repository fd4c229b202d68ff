package hostfacts

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/shirou/gopsutil/v4/disk"
	"github.com/shirou/gopsutil/v4/load"
	"github.com/shirou/gopsutil/v4/mem"
	"github.com/shirou/gopsutil/v4/sensors"
)

// Memory is the machine's memory, in bytes.
type Memory struct {
	Total int64
	// Available is what can be had without swapping (MemAvailable: free
	// memory and the cache the kernel can reclaim).
	Available int64
}

// Memory reads /proc/meminfo (gopsutil).
func (r *Reader) Memory(ctx context.Context) (Memory, error) {
	vm, err := mem.VirtualMemoryWithContext(r.ctx(ctx))
	if err != nil {
		return Memory{}, fmt.Errorf("cannot read the machine's memory: agnx-lite needs Linux with /proc mounted (%w)", err)
	}
	return Memory{Total: int64(vm.Total), Available: int64(vm.Available)}, nil
}

// Load is the load average: runnable processes and those waiting on the
// disk, over 1, 5 and 15 minutes.
type Load struct{ Load1, Load5, Load15 float64 }

// Load reads /proc/loadavg (gopsutil).
func (r *Reader) Load(ctx context.Context) (Load, error) {
	a, err := load.AvgWithContext(r.ctx(ctx))
	if err != nil {
		return Load{}, fmt.Errorf("cannot read the load average: %w", err)
	}
	return Load{Load1: a.Load1, Load5: a.Load5, Load15: a.Load15}, nil
}

// Disk is the space of the filesystem holding a directory, in bytes.
type Disk struct {
	// Dir is the directory asked about, or the nearest parent that exists.
	Dir   string
	Total int64
	// Free is what an unprivileged process may still write (the blocks
	// reserved for root left out), as df's "Avail".
	Free int64
}

// Disk reads the space of the filesystem holding dir (statfs, through
// gopsutil). A dir not made yet is measured where it will be: at its
// nearest parent that exists.
func (r *Reader) Disk(ctx context.Context, dir string) (Disk, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return Disk{}, err
	}
	for {
		u, err := disk.UsageWithContext(r.ctx(ctx), dir)
		if err == nil {
			return Disk{Dir: dir, Total: int64(u.Total), Free: int64(u.Free)}, nil
		}
		parent := filepath.Dir(dir)
		if !os.IsNotExist(err) || parent == dir {
			return Disk{}, fmt.Errorf("cannot read the free space of %s: %w", dir, err)
		}
		dir = parent
	}
}

// Temperature is the hottest temperature sensor's reading in °C (a
// Raspberry Pi has one, its SoC's), and false on a machine with none.
// gopsutil reads the hwmon sensors, or the thermal zones where there is no
// hwmon (/sys/class/thermal/thermal_zone0 on a Pi); a sensor that cannot
// be read is left out.
func (r *Reader) Temperature(ctx context.Context) (float64, bool) {
	ts, _ := sensors.TemperaturesWithContext(r.ctx(ctx))
	hottest, found := 0.0, false
	for _, t := range ts {
		if !found || t.Temperature > hottest {
			hottest, found = t.Temperature, true
		}
	}
	return hottest, found
}

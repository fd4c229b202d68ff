package doctor

import (
	"fmt"
	goruntime "runtime"
	"strings"

	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/runtime/hostfacts"
)

// The thresholds of the host checks: what a Raspberry Pi owner should
// hear about. Each is a warning, never a failure: agnx-lite still runs.
const (
	// lowMemory: less available than this (free memory and reclaimable
	// cache) and the kernel starts swapping or killing.
	lowMemory = 64 << 20
	// lowDisk, lowDiskShare: less free than 500 MiB or 5% of the
	// filesystem where the data dir lives. bbolt grows its file in steps
	// and a full disk refuses commits (runtime.db_reserve_mb keeps a few
	// MB for the database only); an SD card also wears faster when full.
	lowDisk      = 500 << 20
	lowDiskShare = 20 // 1/20: 5%
	// hotCPU: a Raspberry Pi's firmware throttles its cores from 80-85 °C.
	hotCPU = 80.0
	// busyLoad: a 5-minute load average above twice the cores means work
	// waits for the CPU (or for a slow SD card): turns and tools slow down.
	busyLoad = 2
)

// noSensor is temperatureCheck's detail on a machine without a sensor.
const noSensor = "no sensor on this machine"

// noThrottle is throttleCheck's detail where the firmware reports none.
const noThrottle = "not reported on this machine (a Raspberry Pi's firmware reports it)"

// factChecks are the checks of the host facts f, in doctor's order.
// Temperature and throttling are left out where the machine gives none
// unless all is set (doctor says so; the health report leaves them out).
func factChecks(cfg *config.Config, f hostfacts.Facts, all bool) []Check {
	out := []Check{memoryCheck(cfg, f), diskCheck(f), loadCheck(f, goruntime.NumCPU())}
	if all || f.HasTemp {
		out = append(out, temperatureCheck(f))
	}
	if all || f.HasThrottle {
		out = append(out, throttleCheck(f))
	}
	return out
}

func memoryCheck(cfg *config.Config, f hostfacts.Facts) Check {
	if f.MemoryErr != nil {
		return Check{Name: "memory", Status: "warn", Detail: f.MemoryErr.Error()}
	}
	m := f.Memory
	detail := fmt.Sprintf("%.0f MiB available of %.0f MiB; agnx-lite's budget runtime.memory_limit_mb = %d",
		float64(m.Available)/(1<<20), float64(m.Total)/(1<<20), cfg.Runtime.MemoryLimitMB)
	if m.Available < lowMemory {
		return Check{Name: "memory", Status: "warn", Detail: detail,
			Fix: "free memory: stop other services, use a smaller model, or add swap (zram)"}
	}
	return ok("memory", detail)
}

func diskCheck(f hostfacts.Facts) Check {
	if f.DiskErr != nil {
		return Check{Name: "disk", Status: "warn", Detail: f.DiskErr.Error()}
	}
	d := f.Disk
	detail := fmt.Sprintf("%s free of %s where the data lives (%s)", gib(d.Free), gib(d.Total), d.Dir)
	if d.Free < lowDisk || d.Free < d.Total/lowDiskShare {
		return Check{Name: "disk", Status: "warn", Detail: detail + ": under 500 MiB or 5%",
			Fix: "free space on that disk (agnx-lite db compact gives back the database's free pages), or move the data dir to a larger one"}
	}
	return ok("disk", detail)
}

func loadCheck(f hostfacts.Facts, cores int) Check {
	if f.LoadErr != nil {
		return Check{Name: "load", Status: "warn", Detail: f.LoadErr.Error()}
	}
	l := f.Load
	detail := fmt.Sprintf("%.2f %.2f %.2f (1, 5, 15 min) on %d cores", l.Load1, l.Load5, l.Load15, cores)
	if l.Load5 > float64(busyLoad*cores) {
		return Check{Name: "load", Status: "warn", Detail: detail + ": work waits for the CPU or the disk",
			Fix: "see what runs (top): a model served on this machine is the usual load"}
	}
	return ok("load", detail)
}

// temperatureCheck gives the hottest sensor (a Raspberry Pi has one, its
// SoC's); a board without a sensor just says so.
func temperatureCheck(f hostfacts.Facts) Check {
	switch {
	case !f.HasTemp:
		return ok("temperature", noSensor)
	case f.CPUTemp >= hotCPU:
		return Check{Name: "temperature", Status: "warn", Detail: fmt.Sprintf("%.1f °C: the CPU throttles around 80-85 °C", f.CPUTemp),
			Fix: "add a heatsink or fan, or give the board more air"}
	}
	return ok("temperature", fmt.Sprintf("%.1f °C", f.CPUTemp))
}

// throttleCheck warns while the Pi is throttled or short of power, and
// when its power ran short since boot: an under-voltage can crash the
// board or corrupt its SD card. Throttling that is over is told, not
// warned about: the temperature check covers the heat.
func throttleCheck(f hostfacts.Facts) Check {
	if !f.HasThrottle {
		return ok("throttling", noThrottle)
	}
	t := f.Throttle
	now, since := t.Now(), t.SinceBoot()
	detail := fmt.Sprintf("now: %s; since boot: %s (firmware word %#x)", conditions(now), conditions(since), uint32(t))
	power := (now|since)&hostfacts.UnderVoltage != 0
	switch {
	case now == 0 && !power:
		return ok("throttling", detail)
	case power:
		return Check{Name: "throttling", Status: "warn", Detail: detail,
			Fix: "use the board's official power supply and a short, thick cable: under-voltage can crash the board or corrupt its SD card"}
	}
	return Check{Name: "throttling", Status: "warn", Detail: detail,
		Fix: "add a heatsink or fan, or give the board more air"}
}

// conditions are the names of t's conditions, for people.
func conditions(t hostfacts.Throttle) string {
	names := t.Names()
	if len(names) == 0 {
		return "none"
	}
	return strings.ReplaceAll(strings.Join(names, ", "), "_", " ")
}

// gib formats bytes as GiB with one decimal, or MiB under a GiB.
func gib(b int64) string {
	if b < 1<<30 {
		return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
	}
	return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
}

package lite

import "github.com/agnx-lite/agnx-lite/runtime/hostfacts"

// writeHost writes the host facts as agnx_host_* gauges: a fact that
// could not be read is left out, and the temperature and throttling only
// where the board has the sensor.
func writeHost(p *promWriter, f hostfacts.Facts) {
	if f.MemoryErr == nil {
		p.gauge("agnx_host_memory_total_bytes", "The machine's memory.", float64(f.Memory.Total))
		p.gauge("agnx_host_memory_available_bytes", "The machine's memory available without swapping (free and reclaimable cache: MemAvailable).",
			float64(f.Memory.Available))
	}
	if f.DiskErr == nil {
		p.gauge("agnx_host_disk_total_bytes", "Size of the filesystem holding the data dir.", float64(f.Disk.Total))
		p.gauge("agnx_host_disk_free_bytes", "Space an unprivileged process may still write on the filesystem holding the data dir.",
			float64(f.Disk.Free))
	}
	if f.LoadErr == nil {
		p.family("agnx_host_load_average", "gauge", "The machine's load average (runnable processes and those waiting for the disk) over 1, 5 and 15 minutes.")
		p.sample("agnx_host_load_average", f.Load.Load1, "minutes", "1")
		p.sample("agnx_host_load_average", f.Load.Load5, "minutes", "5")
		p.sample("agnx_host_load_average", f.Load.Load15, "minutes", "15")
	}
	if f.HasTemp {
		p.gauge("agnx_host_cpu_temperature_celsius", "The hottest temperature sensor's reading (a Raspberry Pi's SoC).", f.CPUTemp)
	}
	if f.HasThrottle {
		for _, fam := range []struct {
			name, help string
			bits       hostfacts.Throttle
		}{
			{"agnx_host_throttled", "1 while the condition holds, from a Raspberry Pi's firmware (get_throttled).", f.Throttle.Now()},
			{"agnx_host_throttled_since_boot", "1 if the condition held since boot, from a Raspberry Pi's firmware (get_throttled).", f.Throttle.SinceBoot()},
		} {
			p.family(fam.name, "gauge", fam.help)
			for _, c := range hostfacts.Conditions {
				p.sample(fam.name, bit(fam.bits&c.Bit != 0), "condition", c.Name)
			}
		}
	}
}

func bit(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

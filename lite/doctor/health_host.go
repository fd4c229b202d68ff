package doctor

import (
	"github.com/agnx-lite/agnx-lite/lite/httpapi"
	"github.com/agnx-lite/agnx-lite/runtime/hostfacts"
)

// hostReport is the health report's host object: each fact that could be
// read, the sensors only where the board has them.
func hostReport(f hostfacts.Facts) *httpapi.HostFacts {
	out := &httpapi.HostFacts{}
	if f.MemoryErr == nil {
		out.Memory = &httpapi.HostMemory{TotalBytes: f.Memory.Total, AvailableBytes: f.Memory.Available}
	}
	if f.DiskErr == nil {
		out.Disk = &httpapi.HostDisk{TotalBytes: f.Disk.Total, FreeBytes: f.Disk.Free}
	}
	if f.LoadErr == nil {
		out.Load = &httpapi.HostLoad{Load1: f.Load.Load1, Load5: f.Load.Load5, Load15: f.Load.Load15}
	}
	if f.HasTemp {
		out.CPUTemperature = &f.CPUTemp
	}
	if f.HasThrottle {
		out.Throttled = &httpapi.HostThrottled{Now: f.Throttle.Now().Names(), SinceBoot: f.Throttle.SinceBoot().Names()}
	}
	return out
}

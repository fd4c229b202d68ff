package hostfacts

import "context"

// Facts are the host facts at one moment, for doctor, the health report
// and /metrics: each with the error that kept it from being read, or, for
// the sensors only some boards have, whether there is one.
type Facts struct {
	Memory    Memory
	MemoryErr error
	Load      Load
	LoadErr   error
	// Disk is the filesystem holding the data dir.
	Disk    Disk
	DiskErr error
	// CPUTemp is the hottest sensor's reading, °C, when HasTemp.
	CPUTemp float64
	HasTemp bool
	// Throttle is the Raspberry Pi firmware's word, when HasThrottle.
	Throttle    Throttle
	HasThrottle bool
}

// Read reads every fact; dataDir is where agnx-lite keeps its data.
func (r *Reader) Read(ctx context.Context, dataDir string) Facts {
	var f Facts
	f.Memory, f.MemoryErr = r.Memory(ctx)
	f.Load, f.LoadErr = r.Load(ctx)
	f.Disk, f.DiskErr = r.Disk(ctx, dataDir)
	f.CPUTemp, f.HasTemp = r.Temperature(ctx)
	f.Throttle, f.HasThrottle = r.Throttle()
	return f
}

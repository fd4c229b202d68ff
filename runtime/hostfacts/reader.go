package hostfacts

import (
	"context"
	"os"
	"path/filepath"
	"sync"

	"github.com/shirou/gopsutil/v4/common"
	"github.com/shirou/gopsutil/v4/process"
)

// Reader reads the facts. The zero Reader reads this machine; a test sets
// ProcDir and SysDir to directories holding fake files. A Reader is safe for
// concurrent use and must not be copied after its first read.
type Reader struct {
	// ProcDir and SysDir stand for /proc and /sys; "" means the real one.
	ProcDir, SysDir string

	once sync.Once
	env  context.Context // the roots for gopsutil (common.EnvKey)
	self *process.Process
}

// init pins gopsutil to the Reader's roots. gopsutil takes them from the
// context first and from HOST_PROC and HOST_SYS in the environment
// second: so the daemon measures itself even when its environment names
// another /proc (a container's view of its host's). The context and the
// handle on this process are made once: the memory guard reads every 2 s.
func (r *Reader) init() {
	r.once.Do(func() {
		env := common.EnvMap{common.HostProcEnvKey: r.procRoot(), common.HostSysEnvKey: r.sysRoot()}
		r.env = context.WithValue(context.Background(), common.EnvKey, env)
		// Not process.NewProcess: it checks that the pid exists and reads
		// its start time, which nothing here needs.
		r.self = &process.Process{Pid: int32(os.Getpid())}
	})
}

// background is the context of a gopsutil call that cannot block.
func (r *Reader) background() context.Context {
	r.init()
	return r.env
}

// ctx carries the roots into a gopsutil call made under ctx.
func (r *Reader) ctx(ctx context.Context) context.Context {
	r.init()
	return context.WithValue(ctx, common.EnvKey, r.env.Value(common.EnvKey))
}

func (r *Reader) procRoot() string { return orDefault(r.ProcDir, "/proc") }
func (r *Reader) sysRoot() string  { return orDefault(r.SysDir, "/sys") }

// proc and sys are paths of the direct reads, under the roots.
func (r *Reader) proc(elem ...string) string {
	return filepath.Join(append([]string{r.procRoot()}, elem...)...)
}

func (r *Reader) sys(elem ...string) string {
	return filepath.Join(append([]string{r.sysRoot()}, elem...)...)
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

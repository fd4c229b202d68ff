package systemd

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Name is the unit's name, without ".service".
const Name = "agnx-lite"

// ExitConfig is the exit status (EX_CONFIG from sysexits.h) of `serve` when
// its config or an agent is invalid. The unit lists it in
// RestartPreventExitStatus=: restarting cannot fix a bad file.
const ExitConfig = 78

// DefaultMemoryMax is MemoryMax= unless told otherwise: twice
// runtime.memory_limit_mb's default of 64, which is where the memory guard
// holds the daemon, with room above for an agent's build (it gets twice
// the limit while it compiles), the binary's and database's page cache
// and the sandboxed tools. It was 64M beside a 40 MB limit.
const DefaultMemoryMax = "128M"

// Unit is what the unit file says. Paths are absolute.
type Unit struct {
	// Exec is the agnx-lite binary.
	Exec string
	// ConfigFile is passed as -c when set.
	ConfigFile string
	// DataDir is passed as -d, is the only writable path, and holds
	// agnx.env.
	DataDir string
	// User and Group run a system unit; ignored for a user unit.
	User, Group string
	// UserUnit renders a unit for the user's own manager (systemctl
	// --user): no User=, no network-online.target, and only the hardening
	// an unprivileged manager can apply.
	UserUnit bool
	// MemoryMax is MemoryMax=; empty means DefaultMemoryMax.
	MemoryMax string
	// ForeignArch leaves out SystemCallArchitectures=native, which would
	// kill a binary built for another architecture than systemd's.
	ForeignArch bool
	// UID and GID own the data dir and agnx.env that Install creates;
	// -1 leaves ownership alone. Not rendered.
	UID, GID int
}

// EnvFile is where the service's secrets live: one VAR=value a line.
func (u *Unit) EnvFile() string { return filepath.Join(u.DataDir, "agnx.env") }

// Render returns the unit file.
func (u *Unit) Render() ([]byte, error) {
	if err := u.check(); err != nil {
		return nil, err
	}
	w := &unitWriter{}
	u.header(w)
	u.unitSection(w)
	u.serviceSection(w)
	if u.UserUnit {
		u.userHardening(w)
	} else {
		u.systemHardening(w)
	}
	w.line("")
	w.line("[Install]")
	if u.UserUnit {
		w.line("WantedBy=default.target")
	} else {
		w.line("WantedBy=multi-user.target")
	}
	return []byte(w.b.String()), nil
}

func (u *Unit) header(w *unitWriter) {
	edit, env := "systemctl edit "+Name, "systemctl restart "+Name
	if u.UserUnit {
		edit, env = "systemctl --user edit "+Name, "systemctl --user restart "+Name
	}
	w.comment("agnx-lite as a systemd service, written by `agnx-lite service install`.")
	w.comment("Running that command again overwrites this file: put local changes in a drop-in")
	w.comment("(" + edit + ").")
	w.comment("Secrets (TELEGRAM_BOT_TOKEN, OPENAI_API_KEY, ...) go in " + u.EnvFile())
	w.comment("(mode 0600, one VAR=value a line), never here; then " + env + ".")
	w.line("")
}

func (u *Unit) unitSection(w *unitWriter) {
	w.line("[Unit]")
	w.line("Description=agnx-lite, a personal AI-agent runtime")
	w.line("Documentation=https://github.com/agnx-lite/agnx-lite")
	if !u.UserUnit {
		w.comment("Ollama on the LAN and Telegram need the network; agnx-lite retries until it is up.")
		w.line("Wants=network-online.target")
		w.line("After=network-online.target")
	}
	w.comment("No flapping: a service that fails 5 times in 5 minutes stays failed.")
	w.line("StartLimitIntervalSec=5min")
	w.line("StartLimitBurst=5")
	w.line("")
}

func (u *Unit) serviceSection(w *unitWriter) {
	w.line("[Service]")
	w.comment("The daemon sends READY=1 once it serves, STATUS= lines and STOPPING=1.")
	w.line("Type=notify")
	w.line("NotifyAccess=main")
	args := []string{quoteArg(u.Exec), "serve"}
	if u.ConfigFile != "" {
		args = append(args, "-c", quoteArg(u.ConfigFile))
	}
	args = append(args, "-d", quoteArg(u.DataDir))
	w.line("ExecStart=" + strings.Join(args, " "))
	if !u.UserUnit {
		w.line("User=" + u.User)
		w.line("Group=" + u.Group)
	}
	w.line("EnvironmentFile=-" + escapePath(u.EnvFile()))
	w.comment("WATCHDOG=1 comes from the event loop: a loop stuck for 30 s is restarted.")
	w.line("WatchdogSec=30s")
	w.line("Restart=on-failure")
	w.line("RestartSec=5s")
	w.comment(fmt.Sprintf("serve exits %d (EX_CONFIG) on an invalid config or agent: no restart, fix the file.", ExitConfig))
	w.line(fmt.Sprintf("RestartPreventExitStatus=%d", ExitConfig))
	w.comment("SIGTERM drains running turns (10 s), then closes the database.")
	w.line("KillSignal=SIGTERM")
	w.line("TimeoutStopSec=30s")
	mem := u.MemoryMax
	if mem == "" {
		mem = DefaultMemoryMax
	}
	w.comment("Sandboxed tools count too; raise it with `service install --memory-max`.")
	w.line("MemoryMax=" + mem)
	w.comment("A tool killed for memory is the tool's failure; the daemon keeps serving.")
	w.line("OOMPolicy=continue")
	w.line("")
}

// systemHardening is the sandbox of a system unit. Every line was checked
// against bubblewrap by TestHardening_BwrapWorks, or cannot affect it.
func (u *Unit) systemHardening(w *unitWriter) {
	w.comment("Hardening that still lets tools run in bubblewrap (its sandbox is unprivileged:")
	w.comment("NoNewPrivileges=yes needs a bwrap that is not setuid and unprivileged user")
	w.comment("namespaces, e.g. sysctl kernel.unprivileged_userns_clone=1 where that exists).")
	w.line("NoNewPrivileges=yes")
	w.comment("Everything read-only but the data dir (ReadWritePaths= wins inside ProtectHome=).")
	w.line("ProtectSystem=strict")
	w.line("ProtectHome=read-only")
	w.line("ReadWritePaths=" + escapePath(u.DataDir))
	w.line("PrivateTmp=yes")
	w.line("PrivateDevices=yes")
	w.comment("Tools with network: true get an outbound-only network of their own through")
	w.comment("slirp4netns or pasta, which need the tun device inside the private /dev.")
	w.line("BindPaths=-/dev/net/tun")
	w.line("DeviceAllow=/dev/net/tun rw")
	w.line("ProtectKernelModules=yes")
	w.line("ProtectControlGroups=yes")
	w.line("RestrictSUIDSGID=yes")
	w.line("LockPersonality=yes")
	w.line("RestrictRealtime=yes")
	u.syscallArch(w)
	w.line("CapabilityBoundingSet=")
	w.line("AmbientCapabilities=")
	w.comment("Left out on purpose, as they break the sandbox:")
	w.comment("  RestrictNamespaces=, PrivateUsers=  bwrap needs a user namespace of its own;")
	w.comment("  ProtectKernelTunables=, ProtectKernelLogs=  their read-only mounts over /proc/sys")
	w.comment("    and /proc/kmsg make the kernel refuse bwrap's /proc (\"mount too revealing\");")
	w.comment("    with no capabilities the service cannot write kernel tunables anyway;")
	w.comment("  ProtectProc=invisible, ProcSubset=pid  they remount the /proc bwrap mounts again;")
	w.comment("  MemoryDenyWriteExecute=  WASM tools are compiled to machine code (wazero).")
}

// userHardening is what a user manager can apply: it has no privileges,
// so namespace and capability settings would imply PrivateUsers=.
func (u *Unit) userHardening(w *unitWriter) {
	w.comment("Hardening for a user unit. Left out, as a user manager could only apply them")
	w.comment("with PrivateUsers= (which breaks bwrap) or lacks the privilege: ProtectSystem=,")
	w.comment("ProtectHome=, ReadWritePaths=, PrivateTmp=, PrivateDevices=, ProtectKernelModules=,")
	w.comment("ProtectControlGroups=, CapabilityBoundingSet=, AmbientCapabilities=. Tools still")
	w.comment("run in bubblewrap; a system unit (sudo agnx-lite service install) is stricter.")
	w.line("NoNewPrivileges=yes")
	w.line("RestrictSUIDSGID=yes")
	w.line("LockPersonality=yes")
	w.line("RestrictRealtime=yes")
	u.syscallArch(w)
}

func (u *Unit) syscallArch(w *unitWriter) {
	if u.ForeignArch {
		w.comment("SystemCallArchitectures=native left out: this binary's architecture is not systemd's.")
		return
	}
	w.line("SystemCallArchitectures=native")
}

// check refuses values that cannot be written into a unit file safely.
func (u *Unit) check() error {
	paths := map[string]string{"the agnx-lite binary": u.Exec, "the data dir": u.DataDir}
	if u.ConfigFile != "" {
		paths["the config file"] = u.ConfigFile
	}
	for what, p := range paths {
		if !filepath.IsAbs(p) {
			return fmt.Errorf("%s must be an absolute path, not %q", what, p)
		}
		if strings.ContainsAny(p, " \t\n\r\"'\\;") {
			return fmt.Errorf("%s %q has a space, quote, backslash or semicolon: a unit file cannot name it safely; choose another path", what, p)
		}
	}
	if !u.UserUnit && (!validName(u.User) || !validName(u.Group)) {
		return fmt.Errorf("user %q and group %q must be plain account names", u.User, u.Group)
	}
	if u.MemoryMax != "" && !validMemory(u.MemoryMax) {
		return fmt.Errorf("memory limit %q is not a size like 64M, 512M, 1G or infinity", u.MemoryMax)
	}
	return nil
}

func validName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.'
		if !ok {
			return false
		}
	}
	return s[0] != '-'
}

func validMemory(s string) bool {
	if s == "infinity" {
		return true
	}
	n := strings.TrimRight(s, "KMGT")
	if len(s)-len(n) > 1 || n == "" {
		return false
	}
	for _, r := range n {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// escapePath escapes systemd's specifier character: "%" is "%%".
func escapePath(p string) string { return strings.ReplaceAll(p, "%", "%%") }

// quoteArg escapes a checked path for ExecStart=, where "$" also expands.
func quoteArg(p string) string { return strings.ReplaceAll(escapePath(p), "$", "$$") }

type unitWriter struct{ b strings.Builder }

func (w *unitWriter) line(s string) { w.b.WriteString(s + "\n") }

func (w *unitWriter) comment(s string) { w.line("# " + s) }

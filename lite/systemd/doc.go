// Package systemd runs agnx-lite as a systemd service: it renders the unit
// file (Type=notify, a watchdog, start limits, MemoryMax and hardening that
// leaves bubblewrap working), installs, removes and reports on it through
// systemctl, and speaks the sd_notify protocol (READY=1, STATUS=,
// WATCHDOG=1, STOPPING=1) over $NOTIFY_SOCKET without cgo.
//
// systemd imports the standard library only; lite and cmd call it.
//
// # Hardening and the sandbox
//
// Tools run in bubblewrap, which needs unprivileged user namespaces and a
// /proc it can mount again inside its own pid namespace. The unit therefore
// sets NoNewPrivileges, ProtectSystem=strict, ProtectHome=read-only,
// PrivateTmp, PrivateDevices and an empty capability set, and leaves out
// what breaks bwrap: RestrictNamespaces and PrivateUsers (no user
// namespace), ProtectKernelTunables and ProtectKernelLogs (read-only
// mounts over /proc/sys and /proc/kmsg make the kernel refuse bwrap's new
// /proc), ProtectProc and ProcSubset (they remount /proc) and
// MemoryDenyWriteExecute (wazero's compiler writes machine code). The
// hardening test rebuilds this environment with unshare and setpriv and
// runs the real sandbox in it.
//
// # Caveats
//
// A --user unit cannot set up mount namespaces or capability sets without
// PrivateUsers=, so it keeps only NoNewPrivileges and the seccomp-based
// settings. SystemCallArchitectures=native means systemd's own
// architecture: it is left out when this binary is built for another one
// (an arm64 agnx-lite on a 32-bit Raspberry Pi OS with a 64-bit kernel).
package systemd

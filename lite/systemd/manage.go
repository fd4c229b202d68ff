package systemd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Manager installs, removes and inspects the unit through systemctl.
type Manager struct {
	// UserUnit talks to the user's manager (systemctl --user).
	UserUnit bool
	// Out receives what was done, one line each; nil discards it.
	Out io.Writer
	// Systemctl runs systemctl with args and returns its combined output;
	// nil runs the real one. Test seam.
	Systemctl func(ctx context.Context, args ...string) (string, error)
	// Booted reports whether systemd runs this machine; nil checks
	// /run/systemd/system as sd_booted(3) does. Test seam.
	Booted func() bool
	// UnitDir is where the unit file goes; empty means
	// /etc/systemd/system, or ~/.config/systemd/user for a user unit.
	UnitDir string
}

// ErrNoSystemd is returned where systemd does not run (containers, WSL
// without it): there is nothing to install into.
var ErrNoSystemd = errors.New("systemd is not running here, so there is no service to manage: " +
	"see the unit with `agnx-lite service install --dry-run`, or run `agnx-lite serve` under your own supervisor")

// UnitPath is where the unit file is (or would be) written.
func (m *Manager) UnitPath() (string, error) {
	dir := m.UnitDir
	if dir == "" && !m.UserUnit {
		dir = "/etc/systemd/system"
	}
	if dir == "" {
		cfg := os.Getenv("XDG_CONFIG_HOME")
		if cfg == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", fmt.Errorf("cannot find your home directory: %v", err)
			}
			cfg = filepath.Join(home, ".config")
		}
		dir = filepath.Join(cfg, "systemd", "user")
	}
	return filepath.Join(dir, Name+".service"), nil
}

// InstallCommands are the systemctl commands Install runs after writing
// the unit, as a person would type them.
func (m *Manager) InstallCommands() []string {
	return []string{m.cmdline("daemon-reload"), m.cmdline("enable", "--now", Name)}
}

// Install writes unit (rendered from u), creates the data dir and an empty
// agnx.env (0600) when missing, reloads systemd and enables and starts the
// service.
func (m *Manager) Install(ctx context.Context, u *Unit) error {
	text, err := u.Render()
	if err != nil {
		return err
	}
	if err := m.Available(); err != nil {
		return err
	}
	if err := m.prepareDataDir(u); err != nil {
		return err
	}
	path, err := m.UnitPath()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	if err := writeFileAtomic(path, text, 0o644); err != nil {
		return fmt.Errorf("write the unit file: %w", err)
	}
	m.printf("wrote %s\n", path)
	if err := m.run(ctx, "daemon-reload"); err != nil {
		return err
	}
	return m.run(ctx, "enable", "--now", Name)
}

// prepareDataDir makes sure the paths ReadWritePaths= and EnvironmentFile=
// name exist: systemd refuses to start a unit whose ReadWritePaths= is
// missing.
func (m *Manager) prepareDataDir(u *Unit) error {
	if _, err := os.Stat(u.DataDir); errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(u.DataDir, 0o700); err != nil {
			return fmt.Errorf("create the data dir: %w", err)
		}
		if err := chown(u.DataDir, u); err != nil {
			return err
		}
		m.printf("created %s\n", u.DataDir)
	}
	env := u.EnvFile()
	f, err := os.OpenFile(env, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	switch {
	case errors.Is(err, os.ErrExist):
		return nil
	case err != nil:
		return fmt.Errorf("create %s: %w", env, err)
	}
	_, err = f.WriteString("# Secrets for the agnx-lite service, one VAR=value a line (mode 0600), e.g.\n" +
		"# TELEGRAM_BOT_TOKEN=123456:ABC...\n# OPENAI_API_KEY=sk-...\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", env, err)
	}
	m.printf("created %s (0600): put tokens such as TELEGRAM_BOT_TOKEN there\n", env)
	return chown(env, u)
}

func chown(path string, u *Unit) error {
	if u.UID < 0 || os.Geteuid() != 0 {
		return nil
	}
	if err := os.Lchown(path, u.UID, u.GID); err != nil {
		return fmt.Errorf("give %s to %s: %w", path, u.User, err)
	}
	return nil
}

// Uninstall stops and disables the service, removes the unit file and
// reloads systemd. The data dir is left alone.
func (m *Manager) Uninstall(ctx context.Context) error {
	if err := m.Available(); err != nil {
		return err
	}
	path, err := m.UnitPath()
	if err != nil {
		return err
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%s is not installed (no %s)", Name, path)
	}
	if err := m.run(ctx, "disable", "--now", Name); err != nil {
		return err
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("remove the unit file: %w", err)
	}
	m.printf("removed %s\n", path)
	return m.run(ctx, "daemon-reload")
}

// State is what Status found.
type State struct {
	Active  string // is-active: active, inactive, failed, activating, ...
	Enabled string // is-enabled: enabled, disabled, not-found, ...
	// Summary is `systemctl status`'s text.
	Summary string
}

// Status asks systemd about the service.
func (m *Manager) Status(ctx context.Context) (State, error) {
	if err := m.Available(); err != nil {
		return State{}, err
	}
	// These exit non-zero for a stopped or missing unit: the text is the
	// answer, so their errors are not.
	var st State
	st.Summary, _ = m.systemctl(ctx, "status", "--no-pager", "--lines=10", Name)
	st.Active, _ = m.systemctl(ctx, "is-active", Name)
	st.Enabled, _ = m.systemctl(ctx, "is-enabled", Name)
	st.Active, st.Enabled = firstLine(st.Active), firstLine(st.Enabled)
	if strings.Contains(st.Enabled, "No such file") {
		st.Enabled = "not-found" // older systemctl says it in a sentence
	}
	return st, nil
}

// Available returns ErrNoSystemd where systemd does not run this machine.
func (m *Manager) Available() error {
	booted := m.Booted
	if booted == nil {
		booted = func() bool {
			fi, err := os.Stat("/run/systemd/system")
			return err == nil && fi.IsDir()
		}
	}
	if m.Systemctl == nil {
		if _, err := exec.LookPath("systemctl"); err != nil {
			return ErrNoSystemd
		}
	}
	if !booted() {
		return ErrNoSystemd
	}
	return nil
}

// run runs a systemctl command that must succeed, and says so.
func (m *Manager) run(ctx context.Context, args ...string) error {
	out, err := m.systemctl(ctx, args...)
	if err != nil {
		msg := strings.TrimSpace(out)
		if msg == "" {
			msg = err.Error()
		}
		return fmt.Errorf("%s failed: %s", m.cmdline(args...), firstLine(msg))
	}
	m.printf("ran %s\n", m.cmdline(args...))
	return nil
}

func (m *Manager) systemctl(ctx context.Context, args ...string) (string, error) {
	if m.UserUnit {
		args = append([]string{"--user"}, args...)
	}
	if m.Systemctl != nil {
		return m.Systemctl(ctx, args...)
	}
	out, err := exec.CommandContext(ctx, "systemctl", args...).CombinedOutput()
	return string(out), err
}

func (m *Manager) cmdline(args ...string) string {
	if m.UserUnit {
		args = append([]string{"--user"}, args...)
	}
	return "systemctl " + strings.Join(args, " ")
}

func (m *Manager) printf(format string, args ...any) {
	if m.Out != nil {
		fmt.Fprintf(m.Out, format, args...)
	}
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, mode); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

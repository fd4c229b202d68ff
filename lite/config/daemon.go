package config

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// Daemon is what `serve` writes to <data_dir>/serve.json so the CLI can
// find the running daemon.
type Daemon struct {
	PID     int       `json:"pid"`
	URL     string    `json:"url"`
	Started time.Time `json:"started"`
}

// DaemonFile is where a running daemon describes itself.
func (c *Config) DaemonFile() string { return filepath.Join(c.DataDir, "serve.json") }

// ReadDaemon reads serve.json; it returns nil when no daemon is running
// (no file, or its process is gone).
func ReadDaemon(cfg *Config) *Daemon {
	data, err := os.ReadFile(cfg.DaemonFile())
	if err != nil {
		return nil
	}
	var d Daemon
	if json.Unmarshal(data, &d) != nil || d.PID <= 0 || d.URL == "" {
		return nil
	}
	if err := syscall.Kill(d.PID, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return nil
	}
	return &d
}

// WriteDaemon writes serve.json for the daemon of this process, reached
// at url: through a temporary file, so that a reader never sees half of
// it.
func WriteDaemon(cfg *Config, url string) error {
	data, _ := json.Marshal(Daemon{PID: os.Getpid(), URL: url, Started: time.Now().UTC()})
	tmp := cfg.DaemonFile() + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, cfg.DaemonFile())
}

package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agnx-lite/agnx-lite/agents"
)

// EnvDataDir sets the data dir (default ~/.agnx-lite), where agnx.yaml
// and agnx.env are looked for: it wins over agnx.yaml's workspace, and
// --data-dir wins over it.
const EnvDataDir = "AGNX_LITE_HOME"

// DefaultDataDir is $AGNX_LITE_HOME, or ~/.agnx-lite.
func DefaultDataDir() string {
	if d := os.Getenv(EnvDataDir); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return ".agnx-lite"
	}
	return filepath.Join(home, ".agnx-lite")
}

// Locate finds the configuration: the file given with -c, else
// <dataDir>/agnx.yaml when it exists, else the embedded defaults. A data dir
// given on the command line or in the environment wins over the config's
// workspace; relative paths in a config file resolve against its folder.
// A file given with -c that is not an agnx.yaml (Agnx's duragent.yaml)
// keeps Agnx's layout: its workspace defaults to .duragent beside it, and
// when it does not exist the defaults apply, as in Agnx (a warning says
// so); a missing agnx.yaml given with -c is an error.
func Locate(configFile, dataDirFlag string) (*Config, error) {
	dataDir := dataDirFlag
	if dataDir == "" {
		dataDir = os.Getenv(EnvDataDir)
	}
	var cfg *Config
	switch {
	case configFile != "":
		c, err := Load(configFile)
		switch {
		case err == nil:
			cfg = c
		case errors.Is(err, os.ErrNotExist) && agnxLayout(configFile):
			// As in Agnx, a missing duragent.yaml means the defaults.
			cfg = Default()
			cfg.File, cfg.RouteFallback, cfg.missing = configFile, "", true
			cfg.Warnings = []string{configFile + " does not exist: the defaults apply, as in Agnx (workspace .duragent beside it)"}
		default:
			return nil, err
		}
	default:
		dir := dataDir
		if dir == "" {
			dir = DefaultDataDir()
		}
		path := filepath.Join(dir, "agnx.yaml")
		c, err := Load(path)
		switch {
		case err == nil:
			cfg = c
		case errors.Is(err, os.ErrNotExist):
			cfg = Default()
		default:
			return nil, err
		}
	}
	if dataDir != "" {
		// A data dir from the command line or the environment is relative
		// to the working directory, not to the config file it holds: made
		// absolute here so expandHome below does not resolve it twice.
		abs, err := filepath.Abs(dataDir)
		if err != nil {
			return nil, fmt.Errorf("data dir %s: %w (give an absolute path)", dataDir, err)
		}
		cfg.DataDir = abs
	}
	if cfg.DataDir == "" && agnxLayout(cfg.File) {
		cfg.DataDir = DefaultAgnxWorkspace
	}
	if cfg.DataDir == "" {
		cfg.DataDir = DefaultDataDir()
	}
	base := "."
	if cfg.File != "" {
		base = filepath.Dir(cfg.File)
	}
	cfg.DataDir = expandHome(cfg.DataDir, base)
	if cfg.AgentsDir == "" {
		cfg.AgentsDir = filepath.Join(cfg.DataDir, "agents")
	} else {
		cfg.AgentsDir = expandHome(cfg.AgentsDir, base)
	}
	if cfg.WorldMemory.Path != "" {
		cfg.WorldMemory.Path = expandHome(cfg.WorldMemory.Path, base)
	}
	return cfg, nil
}

func expandHome(p, base string) string {
	if len(p) >= 2 && p[:2] == "~/" {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, p[2:])
		}
	}
	if !filepath.IsAbs(p) {
		return filepath.Join(base, p)
	}
	return p
}

// WorldMemoryDir is the folder of world memory shared by every agent:
// world_memory.path (resolved by Locate against the config's folder), else
// <DataDir>/memory/world, as in Agnx.
func (c *Config) WorldMemoryDir() string {
	if c.WorldMemory.Path != "" {
		return c.WorldMemory.Path
	}
	return filepath.Join(c.DataDir, "memory", "world")
}

// DBPath is where the database lives.
func (c *Config) DBPath() string { return filepath.Join(c.DataDir, "agnx.db") }

// WorkspaceDir is the directory an agent's file tools work in.
func (c *Config) WorkspaceDir(agent string) string {
	return filepath.Join(c.DataDir, "workspaces", agent)
}

// Init writes agnx.yaml and the default agent into the data dir, leaving
// what already exists alone. It reports what it wrote.
func Init(cfg *Config) ([]string, error) {
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("create data dir %s: %w (choose another with --data-dir)", cfg.DataDir, err)
	}
	var wrote []string
	cfgPath := filepath.Join(cfg.DataDir, "agnx.yaml")
	if _, err := os.Stat(cfgPath); errors.Is(err, os.ErrNotExist) {
		if err := os.WriteFile(cfgPath, DefaultYAML(), 0o600); err != nil {
			return nil, fmt.Errorf("write %s: %w", cfgPath, err)
		}
		wrote = append(wrote, cfgPath)
	}
	name := cfg.Runtime.DefaultAgent
	if _, err := os.Stat(filepath.Join(cfg.AgentsDir, name, "agent.yaml")); errors.Is(err, os.ErrNotExist) {
		dir, err := agents.WriteTemplate(cfg.AgentsDir, name)
		if err != nil {
			return nil, err
		}
		wrote = append(wrote, dir)
	}
	return wrote, nil
}

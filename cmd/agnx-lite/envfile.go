package main

import (
	"os"
	"path/filepath"

	"github.com/agnx-lite/agnx-lite/lite/config"
)

// loadEnvFile reads <data dir>/agnx.env once, as systemd's
// EnvironmentFile= does for the service, so that ${TELEGRAM_BOT_TOKEN} in
// agnx.yaml and provider keys mean the same for every command. The data
// dir is the service's: -d, else $AGNX_LITE_HOME, else ~/.agnx-lite.
func (g *globals) loadEnvFile() error {
	if g.envLoaded {
		return nil
	}
	g.envLoaded = true
	dir := g.dataDir
	if dir == "" {
		dir = config.DefaultDataDir()
	}
	return applyEnvFile(dir)
}

// applyEnvFile sets each variable of dir's agnx.env that the environment
// does not set: the environment wins, as a variable given on the command
// line should.
func applyEnvFile(dir string) error {
	vars, err := config.ReadEnvFile(filepath.Join(dir, config.EnvFileName))
	if err != nil {
		return err
	}
	for k, v := range vars {
		if _, set := os.LookupEnv(k); set {
			continue
		}
		if err := os.Setenv(k, v); err != nil {
			return err
		}
	}
	return nil
}

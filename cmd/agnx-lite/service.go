package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/systemd"
)

const serviceUsage = "service install [--user] [-c FILE] [-d DIR] [--memory-max 128M] [--run-as USER] [--dry-run] | uninstall [--user] | status [--user]"

func runService(g *globals, args []string) error {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
		return parse(g.flags("service"), args)
	}
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return usagef("say what to do: install, uninstall or status")
	}
	sub, args := args[0], args[1:]
	fs := g.flags("service " + sub)
	userUnit := fs.Bool("user", false, "a service of your own user manager (systemctl --user) instead of a system one")
	var dryRun *bool
	var memMax, runAs *string
	if sub == "install" {
		dryRun = fs.Bool("dry-run", false, "print the unit and the commands instead of installing")
		memMax = fs.String("memory-max", systemd.DefaultMemoryMax, "MemoryMax= of the service (e.g. 64M, 256M, 1G)")
		runAs = fs.String("run-as", "", "account of a system service (default: the one that ran sudo)")
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	m := &systemd.Manager{UserUnit: *userUnit, Out: g.stdout}
	ctx := context.Background()
	switch sub {
	case "install":
		req := systemd.Request{UserUnit: *userUnit, ConfigFile: g.config, DataDir: g.dataDir,
			RunAs: *runAs, MemoryMax: *memMax}
		return serviceInstall(ctx, g, m, req, *dryRun)
	case "uninstall":
		if err := m.Uninstall(ctx); err != nil {
			return err
		}
		fmt.Fprintf(g.stdout, "agnx-lite is no longer a service; its data dir is untouched.\n")
		return nil
	case "status":
		return serviceStatus(ctx, g, m)
	default:
		return usagef("unknown service command %q: install, uninstall or status", sub)
	}
}

func serviceInstall(ctx context.Context, g *globals, m *systemd.Manager, req systemd.Request, dryRun bool) error {
	u, err := systemd.Resolve(req)
	if err != nil {
		return err
	}
	text, err := u.Render()
	if err != nil {
		return err
	}
	err = applyEnvFile(u.DataDir)
	if err == nil {
		_, err = config.Locate(u.ConfigFile, u.DataDir)
	}
	if err != nil {
		fmt.Fprintf(g.stderr, "warning: the config does not load here (%v); the service will stop with exit status %d until it does\n",
			err, systemd.ExitConfig)
	}
	path, err := m.UnitPath()
	if err != nil {
		return err
	}
	if dryRun {
		fmt.Fprintf(g.stdout, "# --dry-run: would write %s:\n\n%s\n", path, text)
		fmt.Fprintf(g.stdout, "# would create %s and %s (0600) if missing, then run:\n", u.DataDir, u.EnvFile())
		for _, c := range m.InstallCommands() {
			fmt.Fprintf(g.stdout, "%s\n", c)
		}
		fmt.Fprintf(g.stdout, "# and once installed:\n%s", systemd.NextSteps(u))
		return nil
	}
	if err := m.Available(); err != nil {
		return err
	}
	if !req.UserUnit && os.Geteuid() != 0 {
		return errors.New("installing a system service needs root: run it with sudo, or use --user (or --dry-run to see the unit)")
	}
	if err := m.Install(ctx, u); err != nil {
		return err
	}
	fmt.Fprintf(g.stdout, "\nagnx-lite runs as a service now: it starts at boot and restarts if it fails.\n%s", systemd.NextSteps(u))
	return nil
}

func serviceStatus(ctx context.Context, g *globals, m *systemd.Manager) error {
	st, err := m.Status(ctx)
	if err != nil {
		return err
	}
	if s := strings.TrimSpace(st.Summary); s != "" {
		fmt.Fprintf(g.stdout, "%s\n\n", s)
	}
	fmt.Fprintf(g.stdout, "active:  %s\nenabled: %s\n", st.Active, st.Enabled)
	if st.Enabled == "not-found" || st.Enabled == "" {
		flag := ""
		if m.UserUnit {
			flag = " --user"
		}
		fmt.Fprintf(g.stdout, "not installed: agnx-lite service install%s\n", flag)
	}
	return nil
}

package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"

	"github.com/agnx-lite/agnx-lite/lite/acpserver"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/httpapi"
)

// runACP serves an agent over ACP on stdin and stdout, for an editor that
// starts agnx-lite as its agent. Standard output carries JSON-RPC only:
// everything else the command and what it opens print goes to stderr.
// Like chat it uses the running daemon when there is one (the database
// is one process's), else opens the data dir itself.
func runACP(g *globals, args []string) error {
	fs := g.flags("acp")
	agent := fs.StringP("agent", "a", "", "agent to serve (default: runtime.default_agent)")
	server := fs.StringP("server", "s", "", "use the daemon at this URL (default: the running one, if any)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("acp takes no arguments, got %q", fs.Arg(0))
	}
	rpc := g.stdout
	quiet := *g
	quiet.stdout = g.stderr // nothing but JSON-RPC reaches the editor
	b, cfg, err := openBackend(&quiet, *server)
	if err != nil {
		return err
	}
	defer b.close()
	if *agent == "" {
		*agent = cfg.Runtime.DefaultAgent
	}
	// An agent that cannot load fails here, where the editor shows the
	// sentence as the agent's exit, not at each session/new.
	if _, err := b.model(context.Background(), *agent); err != nil {
		return err
	}
	ab, err := acpBackend(b, cfg)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return acpserver.Serve(ctx, ab, g.stdin, rpc, acpserver.Options{Agent: *agent, Version: version, Logger: g.logger()})
}

// acpBackend adapts the CLI's backend: the same runtime or daemon, with
// sessions of gateway "acp".
func acpBackend(b backend, cfg *config.Config) (acpserver.Backend, error) {
	switch b := b.(type) {
	case *localBackend:
		return &acpserver.Local{Loop: b.app.Loop, SenderID: acpUser()}, nil
	case *httpBackend:
		return &acpserver.HTTP{Client: httpapi.NewClient(b.url, httpapi.ClientOptions{
			APIToken:   token(envAPIToken, cfg.Server.APIToken),
			AdminToken: token(envAdminToken, cfg.Server.AdminToken),
			SenderID:   acpUser(),
			Gateway:    acpserver.Gateway,
		})}, nil
	}
	return nil, errors.New("acp cannot use this backend: report this as a bug")
}

func acpUser() string {
	if u := os.Getenv("USER"); u != "" {
		return "acp:" + u
	}
	return "acp"
}

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agnx-lite/agnx-lite/lite"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// exportSessionDir writes Agnx's session folder dir/<id>/: events.jsonl
// and the state.json Agnx lists and loads the session from.
func exportSessionDir(g *globals, src *sessionSource, id, dir string) error {
	folder := filepath.Join(dir, id)
	if _, err := os.Stat(folder); err == nil {
		return fmt.Errorf("export: %s already exists: remove it or choose another --dir", folder)
	}
	if err := os.MkdirAll(folder, 0o700); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(folder, "events.jsonl"), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	ax := runtime.NewAgnxWriter(w)
	if err := src.events(id, ax.Write); err != nil {
		os.RemoveAll(folder)
		return notFound(err, id)
	}
	state, err := ax.State(id)
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = f.Close()
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(folder, "state.json"), append(state, '\n'), 0o600)
	}
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	fmt.Fprintf(g.stdout, "exported session %s to %s\n", id, folder)
	return nil
}

// importSessionPaths stores each path, an Agnx session folder or an
// events.jsonl file (Agnx's, or agnx-lite's export), as a new session.
// The database must not be held by a running daemon.
func importSessionPaths(g *globals, server string, paths []string) error {
	if len(paths) == 0 {
		return usagef("import needs an Agnx session folder ({workspace}/sessions/<id>) or an events.jsonl file")
	}
	cfg, err := g.cfg()
	if err != nil {
		return err
	}
	if url := findDaemon(cfg, server); url != "" {
		return fmt.Errorf("the daemon at %s holds the database: stop it (agnx-lite serve stop), import, then start it again", url)
	}
	app, err := lite.Open(cfg, &lite.Options{Logger: g.logger()})
	if err != nil {
		return err
	}
	defer app.Close()
	failed := 0
	for _, p := range paths {
		evs, skipped, err := readSessionPath(p)
		var info runtime.SessionInfo
		if err == nil {
			info, err = app.Loop.ImportSession(context.Background(), evs)
		}
		if err != nil {
			failed++
			fmt.Fprintf(g.stderr, "agnx-lite: %s was not imported: %s\n", p, err)
			continue
		}
		fmt.Fprintf(g.stdout, "imported %s as session %s (%d turns)\n", p, info.ID, info.Turns)
		if skipped > 0 {
			fmt.Fprintf(g.stderr, "agnx-lite: %d lines of %s could not be read and were skipped, as Agnx skips them\n", skipped, p)
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d sessions could not be imported", failed, len(paths))
	}
	return nil
}

// readSessionPath reads a session folder, or an events.jsonl file that
// holds a whole session.
func readSessionPath(p string) ([]runtime.Event, int, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return nil, 0, err
	}
	if fi.IsDir() {
		return runtime.ReadAgnxSession(p)
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	var l runtime.AgnxLog
	var read int64
	if err := l.ReadAgnxLog(f, &read); err != nil {
		return nil, 0, err
	}
	if len(l.Events) == 0 || l.Events[0].Type != runtime.EvSessionStart {
		return nil, 0, errors.New("the file does not start with session_start: give the whole session folder (with state.json) instead")
	}
	return runtime.AgnxTurns(l.Events), l.Skipped, nil
}

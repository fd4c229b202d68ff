package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/toolset"
	"github.com/agnx-lite/agnx-lite/storage"
)

// runDB is `db recover` (copy what is readable of a damaged database
// into a new one, keep the damaged file aside, and put the copy in its
// place) and `db compact` (rewrite the file without its free pages).
func runDB(g *globals, args []string) error {
	fset := g.flags("db")
	if err := parse(fset, args); err != nil {
		return err
	}
	if fset.NArg() != 1 || fset.Arg(0) != "recover" && fset.Arg(0) != "compact" {
		return usagef("say what to do: recover or compact")
	}
	cfg, err := g.cfg()
	if err != nil {
		return err
	}
	if d := config.ReadDaemon(cfg); d != nil {
		return fmt.Errorf("the daemon (pid %d) holds the database: stop it first with \"agnx-lite serve stop\"", d.PID)
	}
	if fset.Arg(0) == "compact" {
		return compactDB(g, cfg.DBPath())
	}
	db := cfg.DBPath()
	if _, err := os.Stat(db); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("no database at %s: nothing to recover", db)
	}
	copyPath := storage.SalvagePath(db)
	rep, err := storage.Salvage(db, copyPath)
	if err != nil {
		return err
	}
	aside := db + ".damaged-" + time.Now().UTC().Format("20060102T150405")
	if err := os.Rename(db, aside); err != nil {
		return fmt.Errorf("the copy is in %s, but %s could not be moved aside (%v): move it and rename the copy yourself", copyPath, db, err)
	}
	if err := os.Rename(copyPath, db); err != nil {
		return fmt.Errorf("the copy is in %s and the damaged file in %s, but the copy could not take its place (%v): rename it yourself", copyPath, aside, err)
	}
	fmt.Fprintf(g.stdout, "recovered %d sessions whole, %d in part (up to their first unreadable event), %d lost; %d events, %d settings, "+
		"%d index entries (schedules, usage, search)\n", rep.Sessions, rep.Partial, rep.Lost, rep.Events, rep.KV, rep.Index)
	if rep.Unlisted {
		fmt.Fprintln(g.stdout, "the list of sessions was damaged: sessions past the damage were not found")
	}
	fmt.Fprintf(g.stdout, "%s now holds the copy; the damaged file is kept as %s\n", db, aside)
	return nil
}

// compactDB is `db compact`: offline, it rewrites agnx.db without the free
// pages bbolt keeps for reuse, and prints the sizes.
func compactDB(g *globals, db string) error {
	if _, err := os.Stat(db); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("no database at %s: nothing to compact", db)
	}
	p := g.progress()
	if fi, err := os.Stat(db); err == nil {
		p.Step("compacting " + filepath.Base(db) + " (" + toolset.ByteSize(fi.Size()) + ")")
	}
	stop := watchFile(p, db+".compact") // the copy storage.Compact writes
	rep, err := storage.Compact(db)
	stop()
	p.Done("")
	if err != nil {
		return err
	}
	fmt.Fprintf(g.stdout, "compacted %s: %s → %s\n", db, toolset.ByteSize(rep.Before), toolset.ByteSize(rep.After))
	return nil
}

// watchFile shows, until stop, how large the file being written at path
// has grown (its final size is not known: a compacted copy is smaller).
func watchFile(p *toolset.Progress, path string) (stop func()) {
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if fi, err := os.Stat(path); err == nil {
					p.Count(fi.Size(), 0)
				}
			}
		}
	}()
	return func() {
		close(done)
		<-exited
	}
}

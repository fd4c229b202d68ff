package main

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/runtime"
)

type exportFlags struct {
	out, server string
	sessions    bool
}

// exportAgent writes the agent as a .tar.gz to -o FILE or standard output,
// with its sessions as events.jsonl when asked.
func exportAgent(g *globals, cfg *config.Config, name string, fl exportFlags) error {
	dir := filepath.Join(cfg.AgentsDir, name)
	if !agents.ValidName(name) {
		return fmt.Errorf("%q is not a valid agent name: use letters, digits and hyphens", name)
	}
	a, err := agents.Load(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("no agent %q in %s: list them with \"agnx-lite agent list\"", name, cfg.AgentsDir)
	}
	if err != nil {
		return err
	}
	toStdout := fl.out == "" || fl.out == "-"
	if f, ok := g.stdout.(*os.File); toStdout && ok && isTerminal(f) {
		return usagef("the archive is binary: redirect it (agnx-lite agent export %s > %s.tar.gz) or use -o FILE", name, name)
	}
	opts := agents.ExportOptions{Version: version, Warn: func(m string) { fmt.Fprintf(g.stderr, "agnx-lite: %s\n", m) }}
	if fl.sessions {
		tmp, files, err := spoolSessions(g, cfg, fl.server, name, a.Name)
		if tmp != "" {
			defer os.RemoveAll(tmp)
		}
		if err != nil {
			return err
		}
		opts.Sessions = files
	}
	if toStdout {
		w := bufio.NewWriter(g.stdout)
		if err := agents.Export(w, dir, opts); err != nil {
			return err
		}
		return w.Flush()
	}
	if err := writeFileAtomic(fl.out, func(w io.Writer) error { return agents.Export(w, dir, opts) }); err != nil {
		return err
	}
	fmt.Fprintf(g.stdout, "exported agent %s with %d sessions to %s\n", name, len(opts.Sessions), fl.out)
	return nil
}

// writeFileAtomic writes name through a temporary file beside it, so a
// failed export leaves no half archive.
func writeFileAtomic(name string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(name), ".agnx-export-*")
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	defer os.Remove(f.Name())
	w := bufio.NewWriter(f)
	if err := write(w); err != nil {
		f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("export: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if err := os.Chmod(f.Name(), 0o600); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if err := os.Rename(f.Name(), name); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	return nil
}

// spoolSessions writes each session of the agent (by folder name or by
// metadata.name) as events.jsonl into a temporary folder, oldest first,
// reading from the running daemon or else the database.
func spoolSessions(g *globals, cfg *config.Config, server, name, metaName string) (string, []agents.SessionFile, error) {
	if _, err := os.Stat(cfg.DBPath()); server == "" && errors.Is(err, fs.ErrNotExist) {
		return "", nil, nil // no database, no sessions
	}
	src, err := openSessions(g, server, false)
	if err != nil {
		return "", nil, err
	}
	defer src.close()
	list, err := src.list()
	if err != nil {
		return "", nil, err
	}
	// Oldest first, ties by id (a total order: sort.Slice needs no
	// stability); not a generic sort, which a struct type would copy.
	sort.Slice(list, func(i, j int) bool {
		a, b := &list[i], &list[j]
		return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.ID, b.ID)) < 0
	})
	tmp, err := os.MkdirTemp("", "agnx-export-")
	if err != nil {
		return "", nil, fmt.Errorf("export: %w", err)
	}
	var files []agents.SessionFile
	for _, s := range list {
		if s.Agent != name && s.Agent != metaName {
			continue
		}
		path := filepath.Join(tmp, s.ID+".jsonl")
		size, err := spoolSession(src, s.ID, path)
		if err != nil {
			return tmp, nil, fmt.Errorf("export session %s: %w", s.ID, err)
		}
		files = append(files, agents.SessionFile{ID: s.ID, Size: size,
			Open: func() (io.ReadCloser, error) { return os.Open(path) }})
	}
	return tmp, files, nil
}

// spoolSession writes one session's events as JSON Lines and returns the
// file's size.
func spoolSession(src *sessionSource, id, path string) (int64, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	var buf []byte
	var size int64
	err = src.events(id, func(e runtime.Event) error {
		buf = append(e.AppendJSON(buf[:0]), '\n')
		size += int64(len(buf))
		_, err := w.Write(buf)
		return err
	})
	if err != nil {
		return 0, err
	}
	if err := w.Flush(); err != nil {
		return 0, err
	}
	return size, f.Close()
}

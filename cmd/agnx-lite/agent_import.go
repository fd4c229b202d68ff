package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/valyala/fastjson"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/toolset"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// maxEventLine bounds one line of an imported events.jsonl.
const maxEventLine = 8 << 20

// importAgent unpacks an archive made by "agent export" into the agents
// folder, shows what the agent will reach, then imports its sessions when
// no daemon holds the database.
func importAgent(g *globals, cfg *config.Config, file string, opts agents.ImportOptions) error {
	r := g.stdin
	var size int64
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return fmt.Errorf("import: %w", err)
		}
		defer f.Close()
		r = f
		if fi, err := f.Stat(); err == nil {
			size = fi.Size()
		}
	}
	p := g.progress()
	if file == "-" {
		p.Step("unpacking the archive from standard input")
	} else {
		p.Step("unpacking " + filepath.Base(file))
	}
	res, err := agents.Import(bufio.NewReader(&countingReader{r: r, p: p, total: size}), cfg.AgentsDir, opts)
	p.Done("")
	var ue *agents.UntrustedError
	if errors.As(err, &ue) {
		printReach(g.stderr, ue.Name, ue.Reach)
	}
	if err != nil {
		return err
	}
	defer res.Close()
	printReach(g.stdout, res.Name, res.Reach)
	verb := "imported"
	if res.Replaced {
		verb = "replaced"
	}
	fmt.Fprintf(g.stdout, "%s agent %s in %s\n", verb, res.Name, res.Dir)
	if len(res.Sessions) == 0 {
		return nil
	}
	if url := findDaemon(cfg, ""); url != "" {
		fmt.Fprintf(g.stderr, "agnx-lite: the archive's %d sessions were not imported: sessions are imported only while the daemon is stopped (agnx-lite serve stop, then import again with --force)\n",
			len(res.Sessions))
		return nil
	}
	return importSessions(g, cfg, res.Sessions)
}

// printReach shows what an agent reaches, one kind per line.
func printReach(w io.Writer, name string, r agents.Reach) {
	fmt.Fprintf(w, "agent %s will reach:\n", name)
	for _, l := range r.Lines() {
		fmt.Fprintf(w, "  %s\n", l)
	}
}

// importSessions stores each session stream as a new session.
func importSessions(g *globals, cfg *config.Config, files []string) error {
	app, err := lite.Open(cfg, &lite.Options{Logger: g.logger()})
	if err != nil {
		return fmt.Errorf("the agent was imported but not its sessions: %w", err)
	}
	defer app.Close()
	ctx := context.Background()
	var p fastjson.Parser
	prog := g.progress()
	failed := 0
	for i, f := range files {
		old := strings.TrimSuffix(filepath.Base(f), ".jsonl")
		prog.Step(fmt.Sprintf("importing session %d of %d", i+1, len(files)))
		evs, err := readEventsFile(&p, f)
		var info runtime.SessionInfo
		if err == nil {
			info, err = app.Loop.ImportSession(ctx, evs)
		}
		prog.Done("") // the line in place goes before the result's
		if err != nil {
			failed++
			fmt.Fprintf(g.stderr, "agnx-lite: session %s was not imported: %s\n", old, err)
			continue
		}
		fmt.Fprintf(g.stdout, "imported session %s as %s (%d turns)\n", old, info.ID, info.Turns)
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d sessions could not be imported", failed, len(files))
	}
	return nil
}

// readEventsFile decodes an events.jsonl file, refusing lines over
// maxEventLine.
func readEventsFile(p *fastjson.Parser, name string) ([]runtime.Event, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readEvents(p, f)
}

func readEvents(p *fastjson.Parser, r io.Reader) ([]runtime.Event, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxEventLine)
	var out []runtime.Event
	line := 0
	for sc.Scan() {
		line++
		if len(sc.Bytes()) == 0 {
			continue
		}
		e, err := runtime.DecodeEvent(p, sc.Bytes())
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		out = append(out, e)
	}
	if errors.Is(sc.Err(), bufio.ErrTooLong) {
		return nil, fmt.Errorf("line %d is longer than %d MiB: the stream is not an events.jsonl export", line+1, maxEventLine>>20)
	}
	return out, sc.Err()
}

// countingReader shows on p how much of total bytes (0: unknown) were read.
type countingReader struct {
	r     io.Reader
	p     *toolset.Progress
	n     int64
	total int64
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n += int64(n)
	c.p.Count(c.n, c.total)
	return n, err
}

package agents

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Entry is an agent found by List, not yet loaded.
type Entry struct {
	Name string // the folder's name
	Dir  string
	// ModTime is agent.yaml's modification time.
	ModTime time.Time
}

// List returns the agents in agentsDir, sorted by name: the folders that
// hold an agent.yaml. It reads directory entries and one stat per agent and
// parses nothing, so it stays cheap with hundreds of agents; Load does the
// rest on first use. Hidden folders are skipped. A missing agentsDir holds
// no agents.
func List(agentsDir string) ([]Entry, error) {
	des, err := os.ReadDir(agentsDir) // sorted by name
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, de := range des {
		name := de.Name()
		if strings.HasPrefix(name, ".") || !de.IsDir() && de.Type()&fs.ModeSymlink == 0 {
			continue
		}
		dir := filepath.Join(agentsDir, name)
		info, err := os.Stat(filepath.Join(dir, FileName))
		if err != nil || !info.Mode().IsRegular() {
			continue // not an agent (or a symlink to a file)
		}
		out = append(out, Entry{Name: name, Dir: dir, ModTime: info.ModTime()})
	}
	return out, nil
}

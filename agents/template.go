package agents

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
)

// DefaultAgent is the name of the embedded template agent.
const DefaultAgent = "assistant"

//go:embed template/assistant
var templateFS embed.FS

// WriteTemplate writes the embedded default agent into agentsDir as a new
// agent called name and returns its folder. It never overwrites: an
// existing folder is an error. On failure it removes what it wrote.
func WriteTemplate(agentsDir, name string) (dir string, err error) {
	if !ValidName(name) {
		return "", fmt.Errorf("create agent: name %q may contain only letters, digits and hyphens", name)
	}
	dir = filepath.Join(agentsDir, name)
	if err := os.MkdirAll(agentsDir, 0o755); err != nil {
		return "", fmt.Errorf("create agent: %w", err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("create agent: %s already exists; choose another name or remove the folder", dir)
		}
		return "", fmt.Errorf("create agent: %w", err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	const root = "template/" + DefaultAgent
	files, err := fs.ReadDir(templateFS, root)
	if err != nil {
		return "", fmt.Errorf("create agent: %w", err)
	}
	for _, f := range files {
		data, err := templateFS.ReadFile(path.Join(root, f.Name()))
		if err != nil {
			return "", fmt.Errorf("create agent: %w", err)
		}
		if f.Name() == FileName {
			data = bytes.Replace(data, []byte("\n  name: "+DefaultAgent+"\n"), []byte("\n  name: "+name+"\n"), 1)
		}
		if err := writeNew(filepath.Join(dir, f.Name()), data); err != nil {
			return "", fmt.Errorf("create agent: %w", err)
		}
	}
	return dir, nil
}

func writeNew(name string, data []byte) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

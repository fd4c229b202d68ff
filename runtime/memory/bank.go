package memory

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Layout of an agent's bank inside its folder, as Agnx's.
const (
	// Dir is the bank's folder in the agent's folder.
	Dir = "memory"
	// MemoryFile is the agent's curated long-term memory.
	MemoryFile = "MEMORY.md"
	// DailyDir holds one file per day, memory/daily/YYYY-MM-DD.md.
	DailyDir = "daily"
	// DateLayout names a daily file (in the daemon's local time).
	DateLayout = "2006-01-02"
)

// BankOptions say where a bank's files are.
type BankOptions struct {
	// AgentDir is the agent's folder; the bank is AgentDir/memory.
	AgentDir string
	// WorldDir is the folder of world memory (<topic>.md files) shared by
	// every agent; "" for none.
	WorldDir string
	// Now is the clock; nil means time.Now. Daily files are named by its
	// date in its location (the daemon's local time, as Agnx's).
	Now func() time.Time
	// World bounds what WriteWorld lets world memory hold; zero fields
	// mean the defaults.
	World WorldLimits
}

// Bank is an agent's memory bank: plain Markdown files that the memory
// tool, the CLI and a person all read and write. Nothing is cached, so a
// person's edit is seen by the next call. Every file is reached through
// an os.Root on the agent's folder (or the world folder), so no name and
// no symlink leads outside, and only regular files are read, each at most
// MaxFileBytes. Writes of MEMORY.md and world files are atomic (temporary
// file, fsync, rename); remember appends one entry with one O_APPEND write
// and fsync, under the bank's mutex, so entries from concurrent sessions
// never interleave.
type Bank struct {
	agentDir, worldDir string
	now                func() time.Time
	world              WorldLimits
}

// NewBank returns the bank o describes. It touches no file.
func NewBank(o BankOptions) *Bank {
	now := o.Now
	if now == nil {
		now = time.Now
	}
	return &Bank{agentDir: o.AgentDir, worldDir: o.WorldDir, now: now, world: o.World.orDefaults()}
}

// MemoryDir is the bank's folder, <agent folder>/memory.
func (b *Bank) MemoryDir() string { return filepath.Join(b.agentDir, Dir) }

// WorldDir is the folder of world memory ("" for none).
func (b *Bank) WorldDir() string { return b.worldDir }

// MemoryPath is the path of MEMORY.md.
func (b *Bank) MemoryPath() string { return filepath.Join(b.MemoryDir(), MemoryFile) }

// DailyPath is the path of the daily file of day's date.
func (b *Bank) DailyPath(day time.Time) string {
	return filepath.Join(b.MemoryDir(), DailyDir, day.Format(DateLayout)+".md")
}

// WorldPath is the path of a world topic's file; topic is sanitised
// (SanitizeTopic).
func (b *Bank) WorldPath(topic string) (string, error) {
	if b.worldDir == "" {
		return "", errNoWorld
	}
	t, err := SanitizeTopic(topic)
	if err != nil {
		return "", err
	}
	return filepath.Join(b.worldDir, t+".md"), nil
}

// Now is the bank's clock.
func (b *Bank) Now() time.Time { return b.now() }

var errNoWorld = errors.New("world memory is not set up here (no world memory folder)")

// maxTopic is the longest topic name.
const maxTopic = 64

// SanitizeTopic turns a topic into a file name without ".md", as Agnx
// does: letters are lowercased and every character other than a-z, 0-9,
// - and _ becomes -, so no topic names another folder ("../x" is
// "---x"). An empty topic or one over 64 bytes is an error.
func SanitizeTopic(topic string) (string, error) {
	switch {
	case strings.TrimSpace(topic) == "":
		return "", errors.New("topic is empty: name it with letters, digits, - and _ (e.g. people)")
	case len(topic) > maxTopic:
		return "", fmt.Errorf("topic is longer than %d characters: use a short name such as people or systems", maxTopic)
	}
	var s strings.Builder
	for _, r := range strings.ToLower(topic) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			s.WriteRune(r)
		} else {
			s.WriteByte('-')
		}
	}
	return s.String(), nil
}

// openAgent opens the agent's folder as a root; the bank's files are
// under memory/ in it.
func (b *Bank) openAgent() (*os.Root, error) {
	if b.agentDir == "" {
		return nil, errors.New("the agent has no folder")
	}
	return os.OpenRoot(b.agentDir)
}

// openWorld opens the world folder, creating it first when create is
// set. Without create, a missing folder gives (nil, nil).
func (b *Bank) openWorld(create bool) (*os.Root, error) {
	if b.worldDir == "" {
		if create {
			return nil, errNoWorld
		}
		return nil, nil
	}
	if create {
		if err := os.MkdirAll(b.worldDir, 0o755); err != nil {
			return nil, err
		}
	}
	r, err := os.OpenRoot(b.worldDir)
	if !create && errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return r, err
}

// Remember appends content to today's daily file as an entry
// "\n## HH:MM\n\n<content>\n", creating the file with "# YYYY-MM-DD\n",
// and returns the file's path. The content is made plain text first
// (plainEntry), so that it cannot add entries or headings of its own.
func (b *Bank) Remember(content string) (string, error) {
	if len(content) > MaxContentBytes {
		return "", errContentSize
	}
	content = plainEntry(content)
	now := b.now()
	root, rel, head, err := b.openDaily(now)
	if err != nil {
		return "", err
	}
	defer root.Close()
	entry := "\n## " + now.Format("15:04") + "\n\n" + content + "\n"
	if err := appendEntry(root, rel, head, []byte(entry)); err != nil {
		return "", pathErr(b.DailyPath(now), err)
	}
	return b.DailyPath(now), nil
}

// openDaily opens the agent's folder with memory/daily made, and names
// day's file (relative to it) and the head it starts with.
func (b *Bank) openDaily(day time.Time) (root *os.Root, rel string, head []byte, err error) {
	if root, err = b.openAgent(); err != nil {
		return nil, "", nil, err
	}
	if err := root.MkdirAll(Dir+"/"+DailyDir, 0o755); err != nil {
		root.Close()
		return nil, "", nil, err
	}
	return root, Dir + "/" + DailyDir + "/" + day.Format(DateLayout) + ".md", []byte("# " + day.Format(DateLayout) + "\n"), nil
}

var errContentSize = fmt.Errorf("content is larger than %d KiB: write less, or split it", MaxContentBytes>>10)

// ReadMemory returns MEMORY.md, "" when it does not exist.
func (b *Bank) ReadMemory() (string, error) {
	root, err := b.openAgent()
	if err != nil {
		return "", err
	}
	defer root.Close()
	data, err := readFile(root, Dir+"/"+MemoryFile)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", pathErr(b.MemoryPath(), err)
	}
	return string(data), nil
}

// WriteMemory replaces MEMORY.md with content, atomically, and returns
// its path.
func (b *Bank) WriteMemory(content string) (string, error) {
	if len(content) > MaxContentBytes {
		return "", errContentSize
	}
	root, err := b.openAgent()
	if err != nil {
		return "", err
	}
	defer root.Close()
	if err := root.MkdirAll(Dir, 0o755); err != nil {
		return "", err
	}
	if err := writeAtomic(root, Dir+"/"+MemoryFile, []byte(content)); err != nil {
		return "", pathErr(b.MemoryPath(), err)
	}
	return b.MemoryPath(), nil
}

// WriteWorld replaces the world file of topic (sanitised) with content,
// atomically, and returns its path; empty content removes the topic (so
// topics can be merged under a cap). It refuses, with the sentence of
// what to do, a write that would pass the bank's WorldLimits; the check
// and the write hold the world folder's lock, so concurrent writers (in
// this process or another) cannot pass a bound together.
func (b *Bank) WriteWorld(topic, content string) (string, error) {
	if len(content) > MaxContentBytes {
		return "", errContentSize
	}
	p, err := b.WorldPath(topic)
	if err != nil {
		return "", err
	}
	root, err := b.openWorld(true)
	if err != nil {
		return "", err
	}
	defer root.Close()
	unlock, err := lockDir(root, ".")
	if err != nil {
		return "", err
	}
	defer unlock()
	name := worldName(p)
	if content == "" {
		return p, removeTopic(root, name, p)
	}
	if err := checkWorld(root, name, len(content), b.world); err != nil {
		return "", err
	}
	if err := writeAtomic(root, name, []byte(content)); err != nil {
		return "", pathErr(p, err)
	}
	return p, nil
}

// pathErr says which file an error is about, in one sentence.
func pathErr(p string, err error) error {
	switch {
	case errors.Is(err, ErrNotRegular):
		return fmt.Errorf("%s %w (a folder, named pipe, device or socket): replace it with a plain file", p, ErrNotRegular)
	case errors.Is(err, ErrTooLarge):
		return fmt.Errorf("%s %w: trim it or move old entries elsewhere", p, ErrTooLarge)
	case errors.Is(err, ErrHardLinked):
		return fmt.Errorf("%s %w: copy it so that it has only one name", p, ErrHardLinked)
	case strings.Contains(err.Error(), "path escapes from parent"):
		return fmt.Errorf("%s is a link that leads outside its folder: replace it with a plain file", p)
	}
	return err
}

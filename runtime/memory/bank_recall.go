package memory

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// Recalled is what a recall read.
type Recalled struct {
	// Text is Agnx's recall: "# World Knowledge" (each world file as
	// "## <topic>"), "# Your Memory" (MEMORY.md) and "# Recent
	// Experiences" (the daily files, newest first), the sections that are
	// not empty joined by "\n\n---\n\n", then the notes; "" when there is
	// nothing. It is at most about MaxRecallBytes.
	Text string
	// Paths are the files read.
	Paths []string
	// Skipped says, one sentence each, which files were left out and why
	// (too large, not a regular file, a link out of its folder).
	Skipped []string
	// Cut is set when the text was cut at MaxRecallBytes.
	Cut bool
}

// Recall reads the world files, MEMORY.md and the daily files of the last
// days days (today included). A file that cannot be read safely is
// skipped with a note; only a failure to open the folders is an error.
func (b *Bank) Recall(days int) (Recalled, error) {
	return b.recall(days, MaxRecallBytes)
}

// showBytes caps Show: a person reads more than a model should.
const showBytes = 16 << 20

// Show is Recall for a person (agnx-lite memory show): the same text, cut
// only past 16 MiB.
func (b *Bank) Show(days int) (Recalled, error) {
	return b.recall(days, showBytes)
}

func (b *Bank) recall(days, max int) (Recalled, error) {
	rc := recaller{budget: max}
	var sections []string
	if world, err := b.recallWorld(&rc); err != nil {
		return Recalled{}, err
	} else if world != "" {
		sections = append(sections, "# World Knowledge\n\n"+world)
	}
	root, err := b.openAgent()
	if err != nil {
		return Recalled{}, err
	}
	defer root.Close()
	if text := rc.read(root, Dir+"/"+MemoryFile, b.MemoryPath()); text != "" {
		sections = append(sections, "# Your Memory\n\n"+text)
	}
	var recent []string
	today := b.now()
	for i := range days {
		day := today.AddDate(0, 0, -i)
		rel := Dir + "/" + DailyDir + "/" + day.Format(DateLayout) + ".md"
		if text := rc.read(root, rel, b.DailyPath(day)); text != "" {
			recent = append(recent, text)
		}
	}
	if len(recent) > 0 {
		sections = append(sections, "# Recent Experiences\n\n"+strings.Join(recent, "\n\n---\n\n"))
	}
	out := Recalled{Text: strings.Join(sections, "\n\n---\n\n"), Paths: rc.paths, Skipped: rc.skipped, Cut: rc.cut}
	if len(out.Text) > max {
		out.Text, out.Cut = cutUTF8(out.Text, max), true
	}
	var notes []string
	if out.Cut {
		notes = append(notes, fmt.Sprintf("[Recall cut at %d KiB: ask for fewer days, or recall with a query.]", max>>10))
	}
	for _, s := range out.Skipped {
		notes = append(notes, "[Skipped "+s+"]")
	}
	if len(notes) > 0 {
		if out.Text != "" {
			out.Text += "\n\n"
		}
		out.Text += strings.Join(notes, "\n")
	}
	return out, nil
}

// recallWorld is the world files, each as "## <topic>\n\n<text>", joined
// by blank lines, in name order.
func (b *Bank) recallWorld(rc *recaller) (string, error) {
	root, err := b.openWorld(false)
	if err != nil || root == nil {
		return "", err
	}
	defer root.Close()
	names, err := listMarkdown(root, ".")
	if err != nil {
		return "", err
	}
	var parts []string
	for _, n := range names {
		text, ok := rc.readWorld(root, n, filepath.Join(b.worldDir, n))
		if ok {
			parts = append(parts, "## "+strings.TrimSuffix(n, ".md")+"\n\n"+text)
		}
	}
	return strings.Join(parts, "\n\n"), nil
}

// recaller reads files for one recall, within a budget of bytes: once the
// budget is spent, no more files are read.
type recaller struct {
	budget  int
	paths   []string
	skipped []string
	cut     bool
}

// read returns the file rel of root (whose path is abs), "" when it is
// missing, empty or unreadable (noted), or the budget is spent.
func (rc *recaller) read(root *os.Root, rel, abs string) string {
	text, _ := rc.readWorld(root, rel, abs)
	return text
}

// readWorld is read that also reports whether the file was read, so that
// an empty world file still shows its topic, as Agnx's recall does.
func (rc *recaller) readWorld(root *os.Root, rel, abs string) (string, bool) {
	if rc.budget <= 0 {
		if _, err := root.Lstat(rel); err == nil {
			rc.cut = true
		}
		return "", false
	}
	data, err := readFile(root, rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", false
	case err != nil:
		rc.skipped = append(rc.skipped, pathErr(abs, err).Error())
		return "", false
	}
	rc.paths = append(rc.paths, abs)
	rc.budget -= len(data)
	return string(data), true
}

// cutUTF8 returns s cut to at most n bytes, not inside a character.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

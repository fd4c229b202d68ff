package config

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"

	"github.com/agnx-lite/agnx-lite/agents"
)

// EnvFileName is the file of secrets in the data dir: one VAR=value a
// line, the service's EnvironmentFile, which every CLI command reads too
// (ReadEnvFile) so that ${VAR} in agnx.yaml means the same everywhere.
const EnvFileName = "agnx.env"

// maxEnvFileSize bounds agnx.env, which is read whole.
const maxEnvFileSize = 64 << 10

// ReadEnvFile reads the variables of an agnx.env: nil and no error when
// there is none. It refuses a file that is not a regular file, that others
// may read or write (mode beyond 0600) or that another user owns, since
// its values are secrets and end up in the config. The format is the
// subset of systemd's EnvironmentFile= that agnx-lite documents: VAR=value
// lines, # and ; comments, blank lines, and values in single or double
// quotes.
func ReadEnvFile(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w (make it readable by this user, mode 0600)", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if err := checkEnvFileMode(path, fi); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, maxEnvFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(data) > maxEnvFileSize {
		return nil, &agents.Error{File: path, Msg: fmt.Sprintf("the file is larger than %d KiB: keep only secrets in it", maxEnvFileSize>>10)}
	}
	return ParseEnvFile(path, data)
}

// checkEnvFileMode refuses an agnx.env others could read, change or plant.
func checkEnvFileMode(path string, fi os.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file: make it one, mode 0600", path)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("%s is mode %04o and holds secrets: run chmod 600 %s", path, perm, path)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if euid := os.Geteuid(); euid != 0 && int(st.Uid) != euid {
		return fmt.Errorf("%s belongs to uid %d, not to you (uid %d): run chown $(id -u) %s, or use your own data dir", path, st.Uid, euid, path)
	}
	return nil
}

// ParseEnvFile parses the text of an agnx.env, naming it file in errors
// (file:line, never a value).
func ParseEnvFile(file string, data []byte) (map[string]string, error) {
	vars := map[string]string{}
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(strings.TrimSuffix(line, "\r"))
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		fail := func(msg string) (map[string]string, error) {
			return nil, &agents.Error{File: file, Line: i + 1, Msg: msg}
		}
		name, value, ok := strings.Cut(line, "=")
		name = strings.TrimSpace(name)
		if !ok || !agents.EnvName(name) {
			return fail("write VAR=value (a name of letters, digits and _, then =)")
		}
		value = strings.TrimSpace(value)
		if n := len(value); n > 0 && (value[0] == '"' || value[0] == '\'') {
			if n < 2 || value[n-1] != value[0] {
				return fail("the quote that opens the value of " + name + " is not closed on the same line")
			}
			q := value[0]
			value = value[1 : n-1]
			if q == '"' {
				value = unescapeDouble(value)
			}
		}
		vars[name] = value
	}
	return vars, nil
}

// unescapeDouble undoes the backslash escapes systemd honours inside
// double quotes (\" \\ \$ \`); any other backslash stays as written.
func unescapeDouble(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

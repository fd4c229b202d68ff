package lite

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// instanceIDFile holds a random id of the daemon of a data dir, made on
// its first start. It names the web page's sign-in cookie
// (httpapi.Options.InstanceID): browsers send a host's cookies to all its
// ports, so two daemons reached by one name need cookies of their own.
const instanceIDFile = "instance-id"

// instanceID returns the data dir's id, making it when there is none (or
// what is there is not one): 16 hex digits. On an error it returns "" and
// the error; the cookie then has the plain name.
func instanceID(dataDir string) (string, error) {
	path := filepath.Join(dataDir, instanceIDFile)
	if f, err := os.Open(path); err == nil {
		data, err := io.ReadAll(io.LimitReader(f, 64))
		f.Close()
		if id := strings.TrimSpace(string(data)); err == nil && validInstanceID(id) {
			return id, nil
		}
	} else if !os.IsNotExist(err) {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand's contract)
	id := hex.EncodeToString(b[:])
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(id+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	return id, nil
}

func validInstanceID(id string) bool {
	_, err := hex.DecodeString(id)
	return len(id) == 16 && err == nil && strings.ToLower(id) == id
}

package config

import (
	"errors"
	"strconv"
	"strings"

	"github.com/agnx-lite/agnx-lite/bwrap"
)

// userName reports whether s is what sandbox.run_as may name besides
// uid:gid: [a-z_][a-z0-9_.-]{0,31}, as useradd allows by default.
func userName(s string) bool {
	if s == "" || len(s) > 32 || !(s[0] == '_' || s[0] >= 'a' && s[0] <= 'z') {
		return false
	}
	for _, c := range []byte(s[1:]) {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// ParseRunAs checks sandbox.run_as: "" (the default user), a user name,
// or uid:gid. For uid:gid it returns the ids. Validation uses it, and so
// does the sandbox, which looks a name up when it starts.
func ParseRunAs(s string) (name string, ids *bwrap.User, err error) {
	if s == "" || userName(s) {
		return s, nil, nil
	}
	u, g, ok := strings.Cut(s, ":")
	uid, uerr := strconv.ParseUint(u, 10, 32)
	gid, gerr := strconv.ParseUint(g, 10, 32)
	if !ok || uerr != nil || gerr != nil {
		return "", nil, errors.New("is neither a user name nor uid:gid (e.g. nobody or 65534:65534)")
	}
	return "", &bwrap.User{UID: uint32(uid), GID: uint32(gid)}, nil
}

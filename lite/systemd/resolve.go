package systemd

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// Request is what `service install` was asked for.
type Request struct {
	// UserUnit installs into the user's own manager (--user).
	UserUnit bool
	// ConfigFile and DataDir are the -c and -d flags; DataDir defaults to
	// $AGNX_LITE_HOME (not under sudo) or the service user's ~/.agnx-lite.
	ConfigFile, DataDir string
	// RunAs names the account of a system unit; default: the one that ran
	// sudo, else the current one. Root is refused.
	RunAs     string
	MemoryMax string
	// Exec is the binary; empty means this one.
	Exec string
	// Getenv and Euid are test seams; nil means the process's own.
	Getenv func(string) string
	Euid   func() int
}

// Resolve turns r into a Unit: it picks the account, makes paths
// absolute and refuses places the service could not use.
func Resolve(r Request) (*Unit, error) {
	getenv, euid := r.Getenv, r.Euid
	if getenv == nil {
		getenv = os.Getenv
	}
	if euid == nil {
		euid = os.Geteuid
	}
	sudo := euid() == 0 && getenv("SUDO_USER") != "" && getenv("SUDO_USER") != "root"
	if r.UserUnit && sudo {
		return nil, errors.New("--user installs the service for the account that runs the command: run it without sudo")
	}
	acct, err := account(r, sudo, getenv)
	if err != nil {
		return nil, err
	}
	u := &Unit{UserUnit: r.UserUnit, MemoryMax: r.MemoryMax, UID: -1, GID: -1}
	if !r.UserUnit {
		if acct.Uid == "0" {
			return nil, errors.New("refusing to run the service as root: run this with sudo from the account that should own it, or pass --run-as USER")
		}
		g, err := user.LookupGroupId(acct.Gid)
		if err != nil {
			return nil, fmt.Errorf("cannot find the group of %s: %v", acct.Username, err)
		}
		u.User, u.Group = acct.Username, g.Name
		u.UID, _ = strconv.Atoi(acct.Uid)
		u.GID, _ = strconv.Atoi(acct.Gid)
	}
	if err := u.resolvePaths(r, sudo, acct, getenv); err != nil {
		return nil, err
	}
	u.ForeignArch = !nativeArch()
	return u, nil
}

// account is who the service runs as.
func account(r Request, sudo bool, getenv func(string) string) (*user.User, error) {
	name := r.RunAs
	if name != "" && r.UserUnit {
		return nil, errors.New("--run-as is for a system service; a --user one runs as you")
	}
	if name == "" && sudo {
		name = getenv("SUDO_USER")
	}
	if name == "" {
		u, err := user.Current()
		if err != nil {
			return nil, fmt.Errorf("cannot tell who you are: %v", err)
		}
		return u, nil
	}
	u, err := user.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("there is no account %q: create it (sudo adduser %s) or name another with --run-as", name, name)
	}
	return u, nil
}

func (u *Unit) resolvePaths(r Request, sudo bool, acct *user.User, getenv func(string) string) error {
	var err error
	if u.Exec = r.Exec; u.Exec == "" {
		if u.Exec, err = os.Executable(); err != nil {
			return fmt.Errorf("cannot find this program's path: %v", err)
		}
	}
	if u.Exec, err = filepath.Abs(u.Exec); err != nil {
		return err
	}
	if real, err := filepath.EvalSymlinks(u.Exec); err == nil {
		u.Exec = real
	}
	if r.ConfigFile != "" {
		if u.ConfigFile, err = filepath.Abs(r.ConfigFile); err != nil {
			return err
		}
		if _, err := os.Stat(u.ConfigFile); err != nil {
			return fmt.Errorf("config file %s: %v", u.ConfigFile, err)
		}
	}
	dir := r.DataDir
	if dir == "" && !sudo && r.RunAs == "" {
		dir = getenv("AGNX_LITE_HOME")
	}
	if dir == "" {
		if acct.HomeDir == "" {
			return fmt.Errorf("%s has no home directory: give the data dir with -d", acct.Username)
		}
		dir = filepath.Join(acct.HomeDir, ".agnx-lite")
	}
	if u.DataDir, err = filepath.Abs(dir); err != nil {
		return err
	}
	return u.checkVisible()
}

// checkVisible refuses paths PrivateTmp= hides from the service.
func (u *Unit) checkVisible() error {
	for what, p := range map[string]string{"the agnx-lite binary": u.Exec, "the config file": u.ConfigFile, "the data dir": u.DataDir} {
		if p == "" || u.UserUnit {
			continue
		}
		for _, tmp := range []string{"/tmp/", "/var/tmp/"} {
			if strings.HasPrefix(p+"/", tmp) {
				return fmt.Errorf("%s is under %s, which the service does not see (PrivateTmp=): move it, e.g. the binary to /usr/local/bin", what, tmp)
			}
		}
	}
	return nil
}

// elfMachine maps GOARCH to the ELF e_machine of its binaries.
var elfMachine = map[string]uint16{"386": 3, "amd64": 62, "arm": 40, "arm64": 183, "riscv64": 243}

// nativeArch reports whether systemd runs binaries of this program's
// architecture, by reading the ELF header of systemctl. Unknown means yes.
func nativeArch() bool {
	want, ok := elfMachine[runtime.GOARCH]
	if !ok {
		return true
	}
	for _, p := range []string{"/usr/bin/systemctl", "/bin/systemctl", "/lib/systemd/systemd", "/usr/lib/systemd/systemd"} {
		f, err := os.Open(p)
		if err != nil {
			continue
		}
		var hdr [20]byte
		_, err = f.ReadAt(hdr[:], 0)
		f.Close()
		if err != nil || string(hdr[:4]) != "\x7fELF" {
			continue
		}
		order := binary.ByteOrder(binary.LittleEndian)
		if hdr[5] == 2 {
			order = binary.BigEndian
		}
		return order.Uint16(hdr[18:20]) == want
	}
	return true
}

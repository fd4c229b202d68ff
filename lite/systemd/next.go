package systemd

import (
	"fmt"
	"strings"
)

// NextSteps is what to tell a person who installs u, one command a line:
// how to see it, follow its logs, talk to it, give it secrets and remove
// it.
func NextSteps(u *Unit) string {
	ctl, journal, sudo := "systemctl", "journalctl -u "+Name, "sudo "
	if u.UserUnit {
		ctl, journal, sudo = "systemctl --user", "journalctl --user -u "+Name, ""
	}
	flag := ""
	if u.UserUnit {
		flag = " --user"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "  its state:     %s status %s   (or: agnx-lite service status%s)\n", ctl, Name, flag)
	fmt.Fprintf(&b, "  its logs:      %s -f\n", journal)
	fmt.Fprintf(&b, "  chat with it:  agnx-lite chat -d %s\n", u.DataDir)
	fmt.Fprintf(&b, "  secrets:       edit %s, then %s%s restart %s\n", u.EnvFile(), sudo, ctl, Name)
	fmt.Fprintf(&b, "  remove it:     %sagnx-lite service uninstall%s   (the data dir stays)\n", sudo, flag)
	if u.UserUnit {
		fmt.Fprintf(&b, "To start it at boot without logging in: sudo loginctl enable-linger $USER\n")
	}
	return b.String()
}

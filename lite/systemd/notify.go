package systemd

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

// Notify sends state (newline-separated VAR=value assignments, such as
// "READY=1") to the service manager over the datagram socket named by
// $NOTIFY_SOCKET: a path, or an abstract socket when it starts with "@".
// Without $NOTIFY_SOCKET (not run by systemd, or not Type=notify) it does
// nothing and returns nil.
func Notify(state string) error {
	sock := os.Getenv("NOTIFY_SOCKET")
	if sock == "" {
		return nil
	}
	if sock[0] != '/' && sock[0] != '@' {
		return fmt.Errorf("sd_notify: unsupported NOTIFY_SOCKET %q", sock)
	}
	// Go turns a leading "@" into the NUL of an abstract address.
	conn, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		return fmt.Errorf("sd_notify: %w", err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(state)); err != nil {
		return fmt.Errorf("sd_notify: %w", err)
	}
	return nil
}

// Ready tells systemd the daemon serves: `systemctl start` returns, and
// units ordered after it start.
func Ready() error { return Notify("READY=1") }

// Stopping tells systemd the daemon is shutting down on its own.
func Stopping() error { return Notify("STOPPING=1") }

// Status sets the one line `systemctl status` shows. Newlines become
// spaces: each line of a message is an assignment of its own.
func Status(msg string) error {
	return Notify("STATUS=" + strings.NewReplacer("\n", " ", "\r", " ").Replace(msg))
}

// Watchdog tells systemd the daemon is alive; without it for WatchdogSec=
// the service is killed and restarted.
func Watchdog() error { return Notify("WATCHDOG=1") }

// WatchdogInterval is WatchdogSec= as systemd passed it in $WATCHDOG_USEC,
// and whether it applies to this process ($WATCHDOG_PID, when set, must
// be our pid). Keep-alives should come at half of it.
func WatchdogInterval() (time.Duration, bool) {
	usec, err := strconv.ParseUint(os.Getenv("WATCHDOG_USEC"), 10, 63)
	if err != nil || usec == 0 {
		return 0, false
	}
	if p := os.Getenv("WATCHDOG_PID"); p != "" {
		pid, err := strconv.Atoi(p)
		if err != nil || pid != os.Getpid() {
			return 0, false
		}
	}
	return time.Duration(usec) * time.Microsecond, true
}

// RunWatchdog calls alive at once and then every interval/2, each time
// with a deadline of interval/2, and sends WATCHDOG=1 after each call
// that succeeds in time. alive should prove the daemon works, not merely
// that this goroutine runs: serve passes the event loop's Ping, so a stuck
// loop stops the keep-alives and systemd restarts the service. It returns
// when ctx ends.
func RunWatchdog(ctx context.Context, interval time.Duration, alive func(context.Context) error) {
	half := interval / 2
	if half <= 0 {
		return
	}
	tick := time.NewTicker(half)
	defer tick.Stop()
	for {
		actx, cancel := context.WithTimeout(ctx, half)
		err := alive(actx)
		late := actx.Err() != nil
		cancel()
		if err == nil && !late && ctx.Err() == nil {
			_ = Watchdog() // a lost datagram is retried by the next tick
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

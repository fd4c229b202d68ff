package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/agnx-lite/agnx-lite/bench/benchenv"
)

// daemon is a running `agnx-lite serve`.
type daemon struct {
	cmd    *exec.Cmd
	base   string // http://127.0.0.1:PORT
	ready  time.Duration
	exited chan error // cmd.Wait's answer; one goroutine owns Wait
}

// startDaemon runs `bin serve` on a free loopback port with home as its
// data dir and ollama as its Ollama, and waits until /readyz answers. Its
// stderr (the JSON log) goes to logw; godebug, when set, is its GODEBUG.
func startDaemon(bin, home, ollama, godebug string, logw io.Writer) (*daemon, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "serve", "--host", "127.0.0.1", "-p", strconv.Itoa(port))
	cmd.Env = benchenv.Daemon(home, ollama)
	if godebug != "" {
		cmd.Env = append(cmd.Env, "GODEBUG="+godebug)
	}
	cmd.Stdout, cmd.Stderr = logw, logw
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	d := &daemon{cmd: cmd, base: "http://127.0.0.1:" + strconv.Itoa(port), exited: make(chan error, 1)}
	go func() { d.exited <- cmd.Wait() }()
	if err := waitReady(d.base, d.exited); err != nil {
		cmd.Process.Kill()
		return nil, err
	}
	d.ready = time.Since(start)
	return d, nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// waitReady polls /readyz: another process gives no signal to wait on.
func waitReady(base string, exited <-chan error) error {
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			return fmt.Errorf("the daemon exited before it was ready (%v): see its log", err)
		default:
		}
		if resp, err := http.Get(base + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	return errors.New("the daemon was not ready within 15 s")
}

func (d *daemon) pid() int { return d.cmd.Process.Pid }

// stop sends SIGTERM and waits up to 10 s, then kills.
func (d *daemon) stop() error {
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	select {
	case err := <-d.exited:
		return err
	case <-time.After(10 * time.Second):
		d.cmd.Process.Kill()
		<-d.exited
		return errors.New("the daemon did not exit within 10 s of SIGTERM; killed")
	}
}

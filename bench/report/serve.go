package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agnx-lite/agnx-lite/bench/benchenv"
	"github.com/agnx-lite/agnx-lite/runtime/hostfacts"
)

// daemonCmd is how to start agnx-lite: the binary, under prefix (the
// emulator) when set.
type daemonCmd struct {
	bin    string
	prefix []string
}

func (d daemonCmd) command(env []string, args ...string) *exec.Cmd {
	argv := append(append(slices.Clone(d.prefix), d.bin), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	return cmd
}

// serveFigures are what measureServe found.
type serveFigures struct {
	starts                          int
	readyMin, readyMedian, readyMax time.Duration
	idle                            hostfacts.Mem // after start, settled
	afterTurnsRSS                   int64
	firstTurn, warmTurn             time.Duration
	warmTurns                       int
}

// native fills the rows of the real binary on this machine; its serve
// figures (nil when serve failed) also feed the targets table.
func native(t *table, ollama string, d daemonCmd, starts int) *serveFigures {
	s, err := measureServe(d, ollama, starts, 20)
	if err != nil {
		t.row("`serve`", "failed: "+err.Error(), "")
		s = nil
	} else {
		t.row("cold start to ready of `serve` (exec to /readyz answering)", fmt.Sprintf("%s median of %d (%s–%s)",
			msec(s.readyMedian), s.starts, msec(s.readyMin), msec(s.readyMax)), "≤ 15 ms")
		t.row("`serve` idle RSS: after start / after "+strconv.Itoa(s.warmTurns+1)+" turns",
			mibs(s.idle.RSS)+" / "+mibs(s.afterTurnsRSS), "≤ 15 MB")
		t.row("one turn through `serve`, POST /messages: first (loads the agent) / warm median",
			msec(s.firstTurn)+" / "+msec(s.warmTurn), "")
	}
	wall, peak, err := oneShots(d, ollama, 10)
	if err != nil {
		t.row("`run -m` one shot", "failed: "+err.Error(), "")
		return s
	}
	t.row("`run -m` one shot: wall / peak RSS (median of 10)", msec(wall)+" / "+mibs(peak), "≤ 50 ms, ≤ 16 MB")
	return s
}

// initHome makes a data dir with `init`, and the environment agnx-lite
// runs in there (benchenv.Daemon: nothing of the caller's; the Go floor
// gets PATH alone). The caller removes home.
func initHome(d daemonCmd, ollama, what string) (home string, env []string, err error) {
	if home, err = os.MkdirTemp("", "agnx-bench-"+what+"-"); err != nil {
		return "", nil, err
	}
	env = benchenv.Daemon(home, ollama)
	if out, err := d.command(env, "init").CombinedOutput(); err != nil {
		os.RemoveAll(home)
		return "", nil, fmt.Errorf("init: %v: %s", err, out)
	}
	return home, env, nil
}

// measureServe starts serve `starts` times on one data dir (made by
// `init`); the last start also runs 1+warm turns.
func measureServe(d daemonCmd, ollama string, starts, warm int) (*serveFigures, error) {
	home, env, err := initHome(d, ollama, "serve")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(home)
	f := &serveFigures{starts: starts, warmTurns: warm}
	var readies []time.Duration
	for i := range starts {
		s, err := startServe(d, env)
		if err != nil {
			return nil, err
		}
		readies = append(readies, s.ready)
		if i == starts-1 {
			err = turns(s, f, warm)
		}
		if stopErr := s.stop(); err == nil {
			err = stopErr
		}
		if err != nil {
			return nil, err
		}
	}
	slices.Sort(readies)
	f.readyMin, f.readyMedian, f.readyMax = readies[0], readies[len(readies)/2], readies[len(readies)-1]
	return f, nil
}

// settle is how long the idle samples wait after ready (and the settled
// sample after the last message): a little over two checks of agnx-lite's
// memory guard (every 2 s), which drops the binary's mapped pages at each
// and returns the heap's free ones once a check finds no turn begun since
// the one before.
const settle = 4500 * time.Millisecond

// turns reads the idle RSS, then times the first turn and the warm ones.
func turns(s *served, f *serveFigures, warm int) error {
	time.Sleep(settle) // let start-up settle: nothing signals it
	var err error
	if f.idle, err = readMem(s.cmd.Process.Pid); err != nil {
		return err
	}
	sid, err := s.session()
	if err != nil {
		return err
	}
	if f.firstTurn, err = s.turn(sid, "hello"); err != nil {
		return err
	}
	var ds []time.Duration
	for i := range warm {
		d, err := s.turn(sid, "hello again "+strconv.Itoa(i))
		if err != nil {
			return err
		}
		ds = append(ds, d)
	}
	slices.Sort(ds)
	f.warmTurn = ds[len(ds)/2]
	f.afterTurnsRSS, err = vmRSS(s.cmd.Process.Pid)
	return err
}

// httpc keeps one idle connection per client of the workload, so 20,000
// turns reuse connections instead of leaving thousands in TIME_WAIT.
var httpc = &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: clients}}

// served is a running `serve`.
type served struct {
	cmd    *exec.Cmd
	base   string
	ready  time.Duration
	exited chan error
}

func startServe(d daemonCmd, env []string) (*served, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := d.command(env, "serve", "--host", "127.0.0.1", "-p", strconv.Itoa(port))
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	s := &served{cmd: cmd, base: "http://127.0.0.1:" + strconv.Itoa(port), exited: make(chan error, 1)}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() { s.exited <- cmd.Wait() }()
	// Polling another process: it gives no signal to wait on.
	for deadline := start.Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		select {
		case err := <-s.exited:
			return nil, fmt.Errorf("serve exited before it was ready: %v", err)
		default:
		}
		if resp, err := httpc.Get(s.base + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				s.ready = time.Since(start)
				return s, nil
			}
		}
	}
	cmd.Process.Kill()
	return nil, errors.New("serve was not ready within 30 s")
}

func (s *served) session() (string, error) {
	var v struct {
		ID string `json:"session_id"`
	}
	_, err := s.post("/api/v1/sessions", `{"agent":"assistant"}`, &v)
	return v.ID, err
}

// turn posts one message and waits for the turn's answer.
func (s *served) turn(sid, text string) (time.Duration, error) {
	var v struct{ Status, Content string }
	d, err := s.post("/api/v1/sessions/"+sid+"/messages", `{"content":"`+text+`"}`, &v)
	if err == nil && (v.Status != "completed" || !strings.Contains(v.Content, text)) {
		err = fmt.Errorf("turn: status %q, content %q", v.Status, v.Content)
	}
	return d, err
}

func (s *served) post(path, body string, v any) (time.Duration, error) {
	start := time.Now()
	resp, err := httpc.Post(s.base+path, "application/json", strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	d := time.Since(start)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode >= 300 {
		return 0, fmt.Errorf("POST %s: %s: %s", path, resp.Status, data)
	}
	return d, json.Unmarshal(data, v)
}

// stop sends SIGTERM and waits up to 10 s, then kills.
func (s *served) stop() error {
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	select {
	case <-s.exited:
		return nil
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
		return errors.New("serve did not exit within 10 s of SIGTERM")
	}
}

// oneShots runs `run -m` n times: the median wall time and peak RSS.
func oneShots(d daemonCmd, ollama string, n int) (time.Duration, int64, error) {
	home, env, err := initHome(d, ollama, "run")
	if err != nil {
		return 0, 0, err
	}
	defer os.RemoveAll(home)
	var walls []time.Duration
	var peaks []int64
	for i := range n {
		cmd := d.command(env, "run", "-m", "hello "+strconv.Itoa(i))
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			return 0, 0, fmt.Errorf("run -m: %v: %s", err, out)
		}
		walls = append(walls, time.Since(start))
		peaks = append(peaks, int64(cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss)<<10)
	}
	slices.Sort(walls)
	slices.Sort(peaks)
	return walls[n/2], peaks[n/2], nil
}

// vmRSS reads a process's resident set from /proc.
func vmRSS(pid int) (int64, error) {
	m, err := readMem(pid)
	return m.RSS, err
}

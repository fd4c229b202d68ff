// Command rss measures the real agnx-lite binary against an instant fake
// Ollama on loopback: the wall time and peak RSS of a one-shot `run -m`,
// and the idle RSS of a running `chat` after a turn. Figures are printed,
// not asserted.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agnx-lite/agnx-lite/bench/procstat"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

func main() {
	bin := flag.String("bin", "bin/agnx-lite", "the agnx-lite binary")
	runs := flag.Int("runs", 20, "how many one-shot runs")
	flag.Parse()
	fake := llmtest.NewServer(llmtest.Ollama, llmtest.Echo())
	defer fake.Close()
	home, err := os.MkdirTemp("", "agnx-bench-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(home)
	env := append(os.Environ(), "AGNX_LITE_HOME="+home, "OLLAMA_HOST="+fake.BaseURL())
	if out, err := command(*bin, env, "init").CombinedOutput(); err != nil {
		log.Fatalf("init: %v\n%s", err, out)
	}
	oneShot(*bin, env, *runs)
	idle(*bin, env)
}

func command(bin string, env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	return cmd
}

// oneShot runs `run -m` n times and reports the median wall time and peak
// RSS.
func oneShot(bin string, env []string, n int) {
	var walls []time.Duration
	var rss []int64
	for i := range n {
		cmd := command(bin, env, "run", "-m", "hello "+strconv.Itoa(i))
		start := time.Now()
		out, err := cmd.CombinedOutput()
		if err != nil {
			log.Fatalf("run -m: %v\n%s", err, out)
		}
		walls = append(walls, time.Since(start))
		rss = append(rss, int64(cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss)) // int32 on 32-bit arm
	}
	slices.Sort(walls)
	slices.Sort(rss)
	fmt.Printf("run -m (instant fake Ollama, %d runs): median %v wall, median peak RSS %.1f MiB, max %.1f MiB\n",
		n, walls[n/2].Round(100*time.Microsecond), float64(rss[n/2])/1024, float64(rss[n-1])/1024)
}

// idle starts `chat`, waits for its banner (cold start), runs one turn,
// then reads its resident set while it waits for input.
func idle(bin string, env []string) {
	cmd := command(bin, env, "chat")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		log.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		log.Fatal(err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	waitFor(lines, "agnx-lite chat")
	ready := time.Since(start)
	io.WriteString(stdin, "hello\n")
	waitFor(lines, "echo: hello")
	// The REPL now waits on its input; its memory is what an idle
	// process holds.
	rss := vmRSS(cmd.Process.Pid)
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		log.Fatalf("chat: %v", err)
	}
	fmt.Printf("chat: cold start to ready %v, idle RSS after one turn %.1f MiB, peak %.1f MiB\n",
		ready.Round(100*time.Microsecond), float64(rss)/1024,
		float64(cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss)/1024)
	if st, err := os.Stat(bin); err == nil {
		fmt.Printf("binary %s: %.1f MiB\n", filepath.Base(bin), float64(st.Size())/(1<<20))
	}
}

func waitFor(sc *bufio.Scanner, prefix string) {
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), prefix) {
			return
		}
	}
	log.Fatalf("never saw %q", prefix)
}

// vmRSS reads a process's resident set in KiB from /proc.
func vmRSS(pid int) int64 {
	m, err := procstat.Read(pid)
	if err != nil {
		log.Fatal(err)
	}
	return m.RSS >> 10
}

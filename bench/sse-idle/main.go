// Command sse-idle measures the real daemon holding idle SSE streams: it
// starts `agnx-lite serve` on a temp data dir against an in-process fake
// Ollama, opens N idle streams (GET .../events) on one session, reports the
// daemon's resident set (VmRSS, VmHWM from /proc) before and after, then
// stops it with SIGTERM and reports how long the shutdown took. Figures are
// printed, not asserted.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agnx-lite/agnx-lite/bench/benchenv"
	"github.com/agnx-lite/agnx-lite/runtime/hostfacts"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

func main() {
	bin := flag.String("bin", "bin/agnx-lite", "the agnx-lite binary")
	conns := flag.Int("conns", 100, "idle SSE connections to open")
	flag.Parse()
	fake := llmtest.NewServer(llmtest.Ollama, llmtest.Echo())
	defer fake.Close()
	home, err := os.MkdirTemp("", "agnx-sse-idle-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(home)
	// Streams count against server.max_streams (128 by default), apart
	// from request connections: past it the daemon refuses new streams.
	conf := fmt.Sprintf("server:\n  max_streams: %d\n", *conns+16)
	if err := os.WriteFile(home+"/agnx.yaml", []byte(conf), 0o600); err != nil {
		log.Fatal(err)
	}
	port := freePort()
	cmd := exec.Command(*bin, "serve", "-p", strconv.Itoa(port))
	cmd.Env = benchenv.Daemon(home, fake.BaseURL())
	cmd.Stderr = io.Discard
	start := time.Now()
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	defer cmd.Process.Kill()
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	waitReady(base)
	fmt.Printf("serve: ready in %v\n", time.Since(start).Round(time.Millisecond))

	sid := session(base)
	post(base+"/api/v1/sessions/"+sid+"/messages", `{"content":"hello"}`) // one turn, as a daemon in use
	pid := cmd.Process.Pid
	before := rss(pid)
	streams := make([]net.Conn, 0, *conns)
	for range *conns {
		streams = append(streams, openIdle(port, sid))
	}
	time.Sleep(500 * time.Millisecond) // let the daemon settle; nothing to signal here
	after := rss(pid)
	fmt.Printf("RSS before: %s\n", before)
	fmt.Printf("RSS with %d idle SSE streams: %s\n", *conns, after)

	stop := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		log.Fatal(err)
	}
	err = cmd.Wait()
	fmt.Printf("SIGTERM to exit with %d streams open: %v (exit: %v)\n", *conns, time.Since(stop).Round(100*time.Microsecond), exitText(err))
	for _, c := range streams {
		c.Close()
	}
}

func freePort() int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func waitReady(base string) {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(base + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(5 * time.Millisecond) // polling another process: no signal to wait on
	}
	log.Fatal("the daemon did not get ready within 10 s")
}

func post(url, body string) []byte {
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		log.Fatalf("POST %s: %s", url, data)
	}
	return data
}

func session(base string) string {
	var s struct {
		ID string `json:"session_id"`
	}
	if err := json.Unmarshal(post(base+"/api/v1/sessions", `{"agent":"assistant"}`), &s); err != nil {
		log.Fatal(err)
	}
	return s.ID
}

// openIdle opens a stream of the session's live events and reads its
// headers; then nothing more comes.
func openIdle(port int, sid string) net.Conn {
	c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		log.Fatal(err)
	}
	after := 1 << 30 // nothing to replay
	fmt.Fprintf(c, "GET /api/v1/sessions/%s/events?after=%d HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", sid, after)
	br := bufio.NewReader(c)
	status, err := br.ReadString('\n')
	if err != nil || !strings.Contains(status, "200") {
		log.Fatalf("open stream: %q %v", status, err)
	}
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			log.Fatal(err)
		}
		if line == "\r\n" {
			return c
		}
	}
}

// rss reads VmRSS and VmHWM of a process.
func rss(pid int) string {
	var procs hostfacts.Reader
	m, err := procs.Process(pid)
	if err != nil {
		log.Fatal(err)
	}
	hwm, err := procs.PeakRSS(pid)
	if err != nil {
		log.Fatal(err)
	}
	return fmt.Sprintf("VmHWM %.1f MiB, VmRSS %.1f MiB", float64(hwm)/(1<<20), float64(m.RSS)/(1<<20))
}

func exitText(err error) string {
	if err == nil {
		return "0"
	}
	return err.Error()
}

package plugin_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"
)

// The test plugins are this test binary run again with helperEnv naming a
// behaviour (TestMain dispatches before any test runs). They speak the
// protocol on stdin/stdout, append every send_message content to
// $AGNX_HELPER_OUT, and exit 0 after $AGNX_HELPER_EXIT_AFTER of them.
const helperEnv = "AGNX_PLUGIN_HELPER"

var helperOut = json.NewEncoder(os.Stdout)

func emit(v any) { _ = helperOut.Encode(v) }

func ready(version string, caps ...string) {
	emit(map[string]any{"type": "ready", "gateway": "helper", "version": version, "capabilities": append([]string{}, caps...)})
}

func text(chat, body string) map[string]any {
	return map[string]any{"type": "message_received", "message_id": "m-" + chat, "chat_id": chat,
		"sender": map[string]any{"id": "u1"}, "content": map[string]any{"type": "text", "text": body},
		"routing": map[string]any{"channel": "helper", "chat_type": "private", "chat_id": chat, "sender_id": "u1"}}
}

func runHelper(kind string) int {
	switch kind {
	case "crash":
		ready("v1alpha1")
		fmt.Fprintln(os.Stderr, "helper: crashing on purpose")
		return 3
	case "silent":
		return serveHelper(false) // never says ready
	case "nopong":
		ready("v1alpha1")
		time.Sleep(time.Hour) // reads nothing, answers nothing (select{} is a deadlock without cgo)
	case "deaf":
		// Each media message is answered at once, without a turn, with a
		// sentence that replies to its 16 KiB message id: a few fill the
		// pipe (at most 1 MiB), the next 64 the queue, the rest are
		// dropped, however fast or slow the daemon is.
		ready("v1alpha1", "reply")
		for i := range 200 {
			m := text("deaf", "")
			m["message_id"] = fmt.Sprintf("%d-%s", i, strings.Repeat("z", 16<<10))
			m["content"] = map[string]any{"type": "media", "media_type": "image"}
			emit(m)
		}
		time.Sleep(time.Hour) // never reads its stdin
	case "v2":
		ready("v2")
		emit(text("c1", "still there?"))
		return serveHelper(true)
	case "auth": // asks to be paired, is paired, then serves
		emit(map[string]any{"type": "auth_required", "method": map[string]any{"method": "pair_code", "code": "WXYZ-0042", "expires_in": 60}})
		emit(map[string]any{"type": "auth_success"})
		ready("v1alpha1")
		return serveHelper(true)
	case "script": // says each "|"-separated line of $AGNX_HELPER_SCRIPT after the answer to the one before
		ready("v1alpha1")
		return scripted(strings.Split(os.Getenv("AGNX_HELPER_SCRIPT"), "|"))
	case "garbage":
		ready("v1alpha1")
		writeGarbage()
		return serveHelper(true)
	case "refused":
		ready("v1alpha1")
		group := text("g1", "hello all")
		group["routing"].(map[string]any)["chat_type"] = "group"
		emit(group)
		emit(text("c1", "let me in"))
		emit(text("c1", "please")) // refused again, silently: once a minute
		ok := text("g2", "hi bot")
		ok["routing"].(map[string]any)["chat_type"] = "group"
		ok["mentions_bot"] = true
		emit(ok)
		return serveHelper(true)
	case "env": // records its whole environment, then serves
		for _, kv := range os.Environ() {
			appendLine(os.Getenv("AGNX_HELPER_OUT"), kv)
		}
		ready("v1alpha1")
		return serveHelper(true)
	case "approver":
		ready("v1alpha1")
		emit(text("c1", "use list_dir {}"))
		return serveHelper(true)
	case "noack": // says one, then two after the first answer; acknowledges nothing
		ready("v1alpha1")
		emit(text("c1", "one"))
		sc := bufio.NewScanner(os.Stdin)
		sc.Buffer(nil, 4<<20)
		got := 0
		for sc.Scan() {
			var c struct {
				Type, Content string
			}
			if json.Unmarshal(sc.Bytes(), &c) != nil || c.Type != "send_message" {
				continue
			}
			appendLine(os.Getenv("AGNX_HELPER_OUT"), c.Content)
			if got++; got == 1 {
				emit(text("c1", "two"))
			} else {
				return 0
			}
		}
		return 0
	case "once": // says $AGNX_HELPER_SAY in its first run only (it leaves $AGNX_HELPER_MARK)
		ready("v1alpha1")
		if f, err := os.OpenFile(os.Getenv("AGNX_HELPER_MARK"), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600); err == nil {
			f.Close()
			emit(text("c1", os.Getenv("AGNX_HELPER_SAY")))
		}
		return serveHelper(true)
	}
	ready("v1alpha1") // "polite", "chat"
	if msg := os.Getenv("AGNX_HELPER_SAY"); msg != "" {
		emit(text("c1", msg))
	}
	return serveHelper(true)
}

// scripted says lines one at a time, each after an answer to the one
// before, acknowledging every send_message; it exits after the last
// answer. A line "~text" is said by Bea in group g1 without addressing
// the bot (no answer is awaited), "@text" by Bea in g1 mentioning it.
func scripted(lines []string) int {
	say := func(line string) bool {
		if line == "" || (line[0] != '~' && line[0] != '@') {
			emit(text("c1", line))
			return true
		}
		m := text("g1", line[1:])
		m["sender"] = map[string]any{"id": "u2", "display_name": "Bea"}
		m["routing"] = map[string]any{"channel": "helper", "chat_type": "group", "chat_id": "g1", "sender_id": "u2", "thread": "t1"}
		m["mentions_bot"] = line[0] == '@'
		emit(m)
		return line[0] == '@'
	}
	i := 0
	for i < len(lines) && !say(lines[i]) {
		i++
	}
	i++
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(nil, 4<<20)
	for sc.Scan() {
		var c struct {
			Type      string `json:"type"`
			RequestID string `json:"request_id"`
			Content   string `json:"content"`
		}
		if json.Unmarshal(sc.Bytes(), &c) != nil || c.Type != "send_message" {
			continue
		}
		appendLine(os.Getenv("AGNX_HELPER_OUT"), c.Content)
		emit(map[string]any{"type": "command_ok", "request_id": c.RequestID})
		for i < len(lines) && !say(lines[i]) {
			i++
		}
		if i >= len(lines) {
			return 0
		}
		i++
	}
	return 0
}

func writeGarbage() {
	w := bufio.NewWriter(os.Stdout)
	fmt.Fprintln(w, `this is not json`)
	fmt.Fprintln(w, `{"type":"message_received","chat_id":`) // cut short
	fmt.Fprintln(w, `{"type":"message_received","content":{"type":"text","text":"no chat"}}`)
	fmt.Fprintln(w, `{"type":"whatever_comes_next","x":1}`)
	fmt.Fprintln(w, `[]`)
	fmt.Fprintf(w, `{"type":"message_received","pad":"%s"}`+"\n", strings.Repeat("a", 2<<20)) // over MaxLine
	fmt.Fprintln(w, "\x00\xff\xfe binary")
	w.Flush()
	media := text("c1", "")
	media["content"] = map[string]any{"type": "media", "media_type": "image", "url": "https://example.org/x.png"}
	emit(media)
	emit(text("c1", "hi"))
}

// serveHelper answers commands; it returns the exit status.
func serveHelper(pong bool) int {
	exitAfter := 0
	fmt.Sscan(os.Getenv("AGNX_HELPER_EXIT_AFTER"), &exitAfter)
	out := os.Getenv("AGNX_HELPER_OUT")
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(nil, 4<<20)
	got := 0
	for sc.Scan() {
		var c struct {
			Type      string `json:"type"`
			RequestID string `json:"request_id"`
			Content   string `json:"content"`
		}
		if json.Unmarshal(sc.Bytes(), &c) != nil {
			continue
		}
		switch c.Type {
		case "ping":
			if pong {
				emit(map[string]any{"type": "pong", "request_id": c.RequestID, "uptime_seconds": 1, "connected": true})
			}
		case "shutdown":
			appendLine(out, "<shutdown>")
			return 0
		case "send_message":
			appendLine(out, c.Content)
			emit(map[string]any{"type": "command_ok", "request_id": c.RequestID})
			if i := strings.Index(c.Content, "/approve "); i >= 0 {
				id := strings.Fields(c.Content[i:])[1]
				emit(text("c1", "/approve "+id+" once"))
			}
			if got++; exitAfter > 0 && got >= exitAfter {
				return 0
			}
		}
	}
	return 0
}

func appendLine(path, s string) {
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	line, _ := json.Marshal(s)
	fmt.Fprintf(f, "%s\n", line)
}

// readLines reads what a helper recorded.
func readLines(path string) []string {
	data, _ := os.ReadFile(path)
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var s string
		if json.Unmarshal([]byte(l), &s) == nil {
			out = append(out, s)
		}
	}
	return out
}

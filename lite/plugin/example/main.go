// Command example is a gateway plugin for agnx-lite, small enough to read
// in one sitting: a scripted chat. It plays the lines of a file as one
// user's messages, one at a time, each after the agent's answer to the
// previous one, and writes every answer it is sent to a file (or to its
// stderr, which the daemon logs).
//
// Configure it in agnx.yaml:
//
//	gateways:
//	  external:
//	    - name: script
//	      command: /usr/local/bin/agnx-example-plugin
//	      env:
//	        AGNX_EXAMPLE_INPUT: /home/pi/questions.txt
//	        AGNX_EXAMPLE_OUTPUT: /home/pi/answers.jsonl
//
// AGNX_EXAMPLE_EXIT_AFTER=N makes it say goodbye and exit 0 after N
// answers. It uses nothing but the standard library: any language that
// can read and write lines of JSON can do the same.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// command is every field of every command the core sends that this
// plugin reads; the type says which apply.
type command struct {
	Type            string `json:"type"`
	RequestID       string `json:"request_id"`
	ChatID          string `json:"chat_id"`
	Content         string `json:"content"`
	CallbackQueryID string `json:"callback_query_id"`
}

const chat = "example-chat"

var (
	outMu sync.Mutex
	out   = json.NewEncoder(os.Stdout) // one JSON object per line
	start = time.Now()
)

// emit writes one protocol line. Lines must never interleave, hence the lock.
func emit(v any) {
	outMu.Lock()
	defer outMu.Unlock()
	if err := out.Encode(v); err != nil {
		fmt.Fprintln(os.Stderr, "stdout:", err)
		os.Exit(1)
	}
}

func main() {
	lines, err := readLines(os.Getenv("AGNX_EXAMPLE_INPUT"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	answers := io.Writer(os.Stderr)
	if path := os.Getenv("AGNX_EXAMPLE_OUTPUT"); path != "" {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		defer f.Close()
		answers = f
	}
	exitAfter, _ := strconv.Atoi(os.Getenv("AGNX_EXAMPLE_EXIT_AFTER"))

	emit(map[string]any{"type": "ready", "gateway": "example", "version": "v1alpha1",
		"capabilities": []string{"typing", "reply"}})
	next := 0
	sendNext := func() {
		if next < len(lines) {
			next++
			emit(message(next, lines[next-1]))
		}
	}
	sendNext()
	serve(answers, exitAfter, sendNext)
}

// serve reads commands until stdin closes or the core says shutdown.
func serve(answers io.Writer, exitAfter int, sendNext func()) {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 64<<10), 4<<20)
	got := 0
	for in.Scan() {
		var c command
		if json.Unmarshal(in.Bytes(), &c) != nil {
			continue // not for us: be lenient
		}
		switch c.Type {
		case "send_message":
			line, _ := json.Marshal(map[string]string{"chat_id": c.ChatID, "content": c.Content})
			fmt.Fprintf(answers, "%s\n", line)
			emit(map[string]any{"type": "command_ok", "request_id": c.RequestID, "message_id": "a" + c.RequestID})
			got++
			if exitAfter > 0 && got >= exitAfter {
				emit(map[string]any{"type": "shutdown", "reason": "the script is done"})
				return
			}
			sendNext()
		case "answer_callback_query", "edit_message", "delete_message", "send_media":
			emit(map[string]any{"type": "command_ok", "request_id": c.RequestID})
		case "ping":
			emit(map[string]any{"type": "pong", "request_id": c.RequestID,
				"uptime_seconds": int(time.Since(start).Seconds()), "connected": true})
		case "shutdown":
			return
		}
	}
}

// message is a message_received from the script's user.
func message(n int, text string) map[string]any {
	return map[string]any{
		"type":       "message_received",
		"message_id": "m" + strconv.Itoa(n),
		"chat_id":    chat,
		"sender":     map[string]string{"id": "example-user", "display_name": "Example User"},
		"content":    map[string]string{"type": "text", "text": text},
		"routing": map[string]string{"channel": "example", "chat_type": "private",
			"chat_id": chat, "sender_id": "example-user"},
		"mentions_bot": false, "reply_to_bot": false,
		"timestamp": time.Now().UTC().Format(time.RFC3339), "metadata": map[string]any{},
	}
}

func readLines(path string) ([]string, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return lines, nil
}

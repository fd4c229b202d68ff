package bgproc

import (
	"fmt"
	"strings"
	"syscall"
)

// keyStep is one thing send_keys does: write bytes, send a signal, or
// close stdin.
type keyStep struct {
	bytes  string
	signal syscall.Signal
	eof    bool
}

// namedKeys are the tmux key names send_keys understands, as the bytes a
// terminal would send (Enter is a newline: stdin is a pipe).
var namedKeys = map[string]string{
	"enter": "\n", "c-m": "\n", "c-j": "\n", "kpenter": "\n",
	"tab": "\t", "c-i": "\t", "btab": "\x1b[Z",
	"escape": "\x1b", "esc": "\x1b", "c-[": "\x1b",
	"space": " ", "bspace": "\x7f", "backspace": "\x7f",
	"up": "\x1b[A", "down": "\x1b[B", "right": "\x1b[C", "left": "\x1b[D",
	"home": "\x1b[H", "end": "\x1b[F",
	"pageup": "\x1b[5~", "ppage": "\x1b[5~", "pgup": "\x1b[5~",
	"pagedown": "\x1b[6~", "npage": "\x1b[6~", "pgdn": "\x1b[6~",
	"dc": "\x1b[3~", "delete": "\x1b[3~", "ic": "\x1b[2~", "insert": "\x1b[2~",
}

// maxKeys bounds one send_keys call.
const maxKeys = 4 << 10

// parseKeys turns send_keys's space-separated key names into steps: named
// keys their bytes, C-c SIGINT to the process's group, C-\ SIGQUIT, C-d the
// end of input (stdin closed), other C-<letter> its control byte, anything
// else typed as it is (as tmux does).
func parseKeys(keys string, pressEnter bool) ([]keyStep, error) {
	if len(keys) > maxKeys {
		return nil, fmt.Errorf("keys is %d bytes long, over %d: send them in parts, or use write for text", len(keys), maxKeys)
	}
	var steps []keyStep
	var pending strings.Builder
	flush := func() {
		if pending.Len() > 0 {
			steps = append(steps, keyStep{bytes: pending.String()})
			pending.Reset()
		}
	}
	for _, k := range strings.Fields(keys) {
		low := strings.ToLower(k)
		switch {
		case low == "c-c":
			flush()
			steps = append(steps, keyStep{signal: syscall.SIGINT})
		case low == `c-\`:
			flush()
			steps = append(steps, keyStep{signal: syscall.SIGQUIT})
		case low == "c-d":
			flush()
			steps = append(steps, keyStep{eof: true})
		case low == "c-z":
			return nil, fmt.Errorf("C-z is not supported: there is no job control in the sandbox; use C-c or kill")
		case namedKeys[low] != "":
			pending.WriteString(namedKeys[low])
		case len(low) == 3 && strings.HasPrefix(low, "c-") && low[2] >= 'a' && low[2] <= 'z':
			pending.WriteByte(low[2] - 'a' + 1)
		default:
			pending.WriteString(k)
		}
	}
	if pressEnter {
		pending.WriteByte('\n')
	}
	flush()
	if len(steps) == 0 {
		return nil, fmt.Errorf("keys is empty: give key names such as \"y Enter\" or \"C-c\"")
	}
	return steps, nil
}

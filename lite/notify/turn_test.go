package notify

import (
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// Which turn ends get a notice: not a chat gateway's (its outbox has the
// answer), a heartbeat's or a subagent's; a watched turn only when a
// schedule (an origin) started it or the agent, as built, says always;
// and none when the agent says never.
func TestWorker_TurnEnded(t *testing.T) {
	var logs strings.Builder
	var mu sync.Mutex
	w := start(Options{Logger: slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil)),
		Gateways: &config.Gateways{Telegram: config.Telegram{Enabled: true}},
		Agents: fakeAgents{
			specs: map[string]agents.NotifySettings{
				"ada":    {When: agents.NotifyUnwatched},
				"eve":    {When: agents.NotifyAlways},
				"silent": {When: agents.NotifyNever},
			},
			cached: map[string]agents.NotifySettings{"eve": {When: agents.NotifyAlways}},
		}})
	const ok = runtime.TurnCompleted
	for _, te := range []runtime.TurnEnd{
		{Agent: "ada", Gateway: "http", Reason: ok, Answer: "unwatched"},
		{Agent: "ada", Gateway: "http", Reason: ok, Answer: "watched", Watched: true},
		{Agent: "ada", Gateway: "http", Reason: ok, Answer: "scheduled", Watched: true, Origin: "schedule:1"},
		{Agent: "eve", Gateway: "http", Reason: ok, Answer: "always", Watched: true},
		{Agent: "silent", Gateway: "http", Reason: ok, Answer: "never"},
		{Agent: "ada", Gateway: "telegram", ChatID: "42", Reason: ok, Answer: "telegram"},
		{Agent: "ada", Gateway: agents.HeartbeatGateway, Reason: ok, Answer: "heartbeat", Origin: agents.OriginHeartbeat},
		{Agent: "ada", Gateway: runtime.GatewaySubagent, ChatID: "s0", Reason: ok, Answer: "subagent"},
		{Gateway: "http", Reason: ok, Answer: "nobody's"},
	} {
		w.TurnEnded(te)
	}
	require.NoError(t, stop(w))

	mu.Lock()
	defer mu.Unlock()
	var noticed []string
	for _, line := range strings.Split(logs.String(), "\n") {
		if _, text, ok := strings.Cut(line, ` text="`); ok && strings.Contains(line, "msg=notification ") {
			noticed = append(noticed, strings.TrimSuffix(text, `"`))
		}
	}
	assert.Equal(t, []string{"ada: unwatched", "ada: scheduled", "eve: always"}, noticed)
}

func TestTurnNotification_Text(t *testing.T) {
	long := strings.Repeat("ü", 400)
	for _, c := range []struct {
		te   runtime.TurnEnd
		want string
	}{
		{runtime.TurnEnd{Agent: "a", Reason: runtime.TurnCompleted, Answer: " It is 17:00. "}, "a: It is 17:00."},
		{runtime.TurnEnd{Agent: "a", Reason: runtime.TurnCompleted}, "a: done, with no answer"},
		{runtime.TurnEnd{Agent: "a", Reason: runtime.TurnFailed, Answer: "no network"}, "a: the turn failed: no network"},
		{runtime.TurnEnd{Agent: "a", Reason: "odd"}, "a: the turn ended (odd)"},
		{runtime.TurnEnd{Agent: "a", Reason: runtime.TurnCompleted, Answer: long}, "a: " + strings.Repeat("ü", 300) + "…"},
	} {
		n := turnNotification(c.te)
		assert.Equal(t, c.want, n.Text)
		assert.Equal(t, "a", n.Agent)
	}
}

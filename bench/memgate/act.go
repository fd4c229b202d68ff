package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
)

// The workload of agents that act on their own: every agent has a
// HEARTBEAT.md (a heartbeat schedule each, every 30 minutes: registered,
// not due during the gate) and the schedule and background_process tools;
// the first schedTurns turns each create a recurring schedule that posts a
// notice to its session every 10 s while the gate runs; every actTurnEvery
// turns one runs a background process to its end, and
// as often a webhook starts a turn of its own, which spawns a subagent
// (the agent tool): the child runs its own turn and reports back, which
// starts another turn of the hook's session.
const (
	schedTurns   = 100
	actTurnEvery = 50
	hookName     = "gate"
	hookToken    = "memgate-hook-token-0123456789"
)

const actTools = `    - type: builtin
      name: schedule
    - type: builtin
      name: background_process
    - type: builtin
      name: agent
`

const heartbeat = "Look at the time. If nothing needs saying, answer HEARTBEAT_OK.\n"

// hookConfig is the webhook the workload posts to: its turns run in the
// hook's own session.
func hookConfig() string {
	return fmt.Sprintf("hooks:\n  %s:\n    agent: agent-000\n    template: 'use agent {\"action\":\"spawn\",\"task\":\"gate event {{.n}}\"}'\n"+
		"    token: %s\n    max_per_minute: 6000\nsubagents:\n  max_children: 1000\n", hookName, hookToken)
}

var (
	schedCall = call{`use schedule {"action":"create","every_seconds":10,"message":"gate tick"}`,
		"schedule said: Created recurring schedule: sched_"}
	spawnCall = call{`use background_process {"action":"spawn","command":"echo gate","wait":true}`,
		"background_process said: {\n  \"status\": \"exited\",\n  \"exit_code\": 0"}
)

// actCallFor is turn k's call of the acting workload, if it has one.
func actCallFor(k int) (call, bool) {
	switch {
	case k < schedTurns:
		return schedCall, true
	case k%actTurnEvery == 10:
		return spawnCall, true
	}
	return call{}, false
}

// writeHeartbeat gives an agent its HEARTBEAT.md.
func writeHeartbeat(dir string) error {
	return os.WriteFile(filepath.Join(dir, "HEARTBEAT.md"), []byte(heartbeat), 0o644)
}

// postHook delivers webhook event k: 202 once it is stored.
func postHook(c *http.Client, base string, k int) error {
	req, err := http.NewRequest(http.MethodPost, base+"/api/v1/hooks/"+hookName, strings.NewReader(fmt.Sprintf(`{"n":%d}`, k)))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+hookToken)
	req.Header.Set("X-Delivery-ID", fmt.Sprintf("gate-%d", k))
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		return fmt.Errorf("webhook %d: status %d", k, resp.StatusCode)
	}
	return nil
}

// schedRuns reads what the schedules did: how many are active, and how
// many runs they made.
func schedRuns(c *http.Client, base string) (active, runs int, err error) {
	var body struct {
		Schedules []struct {
			ID   string `json:"id"`
			Runs int    `json:"runs"`
		} `json:"schedules"`
	}
	if err := getJSON(c, base+"/api/v1/schedules", &body); err != nil {
		return 0, 0, err
	}
	for _, s := range body.Schedules {
		if strings.HasPrefix(s.ID, "sched_") { // not the heartbeats
			active++
			runs += s.Runs
		}
	}
	return active, runs, nil
}

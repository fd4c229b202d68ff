package lite

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/ci/testenv"
	"github.com/agnx-lite/agnx-lite/lite/autonomy"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/httpapi"
	"github.com/agnx-lite/agnx-lite/lite/telegram/tgtest"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
	"github.com/agnx-lite/agnx-lite/runtime/sched"
	"github.com/agnx-lite/agnx-lite/storage"
)

// The schedule crash test runs the daemon's schedules in a child process
// (this test binary again) and SIGKILLs it at one of two moments of a
// firing: inside the transaction that stores the reminder and records the
// run (nothing of it is durable: after a restart it runs once), or after
// that commit, before the gateway was asked to deliver (it is recorded:
// after a restart it is delivered once and never run again).

const (
	schedCrashEnv   = "AGNX_SCHED_CRASH_DIR"
	schedCrashTG    = "AGNX_SCHED_CRASH_TG"
	schedCrashStage = "AGNX_SCHED_CRASH_STAGE" // in-commit or stored
	schedCrashAhead = "AGNX_SCHED_CRASH_AHEAD" // the clock's offset, in seconds
)

func schedCrashConfig(dir, tgURL string) *config.Config {
	cfg := crashConfig(dir)
	cfg.Runtime.MemoryLimitMB = 0
	cfg.Sandbox.Mode = "trust"
	cfg.Server.Port = 0 // the daemon started after the kill serves on any free port, not 8080
	cfg.Gateways.Telegram = config.Telegram{Enabled: true, BotToken: tgtest.Token, Allowlist: []int64{42}, APIBaseURL: tgURL}
	return cfg
}

// TestSchedCrashChild is the child's side; it does nothing in a normal run.
// It runs the gateways and the schedules as Serve does, with the firing
// held at the stage the parent kills it in.
func TestSchedCrashChild(t *testing.T) {
	dir := os.Getenv(schedCrashEnv)
	if dir == "" {
		t.Skip("runs only as the schedule crash test's child")
	}
	ahead, _ := strconv.Atoi(os.Getenv(schedCrashAhead))
	// Wait here for the parent's SIGKILL; SIGTERM ends the child if the
	// parent is gone.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	hold := func() {
		fmt.Println(os.Getenv(schedCrashStage))
		<-ctx.Done()
		os.Exit(4)
	}
	app, err := Open(schedCrashConfig(dir, os.Getenv(schedCrashTG)), &Options{
		Clock: func() time.Time { return time.Now().Add(time.Duration(ahead) * time.Second) },
		autonomy: func(so *autonomy.SchedulesOptions, _ *autonomy.TasksOptions) {
			switch os.Getenv(schedCrashStage) {
			case "in-commit":
				so.InCommit = hold
			case "stored":
				so.Stored = hold
			}
		}})
	if err != nil {
		fmt.Println("open-error", err)
		os.Exit(3)
	}
	if _, err := startGateways(app, slog.New(slog.DiscardHandler)); err != nil {
		fmt.Println("gateway-error", err)
		os.Exit(3)
	}
	_ = app.sched.Start(context.Background())
	fmt.Println("running")
	<-ctx.Done()
	os.Exit(4)
}

func TestSchedule_SIGKILLInAFiringRunsItOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test is not short")
	}
	testenv.SkipIfNoReexec(t, "re-executes the test binary as the child it kills")
	fake := llmtest.NewHandler(t, llmtest.Ollama, llmtest.Echo())
	t.Setenv("OLLAMA_HOST", fake.BaseURL())
	for _, stage := range []string{"in-commit", "stored"} {
		t.Run(stage, func(t *testing.T) { schedCrashOnce(t, stage) })
	}
}

// schedCrashOnce makes a one-shot reminder for Telegram chat 42, kills a
// child daemon at stage of its firing, restarts the daemon and checks the
// reminder reaches the chat once, stored once, its run logged once.
func schedCrashOnce(t *testing.T, stage string) {
	const reminder = "Water the plants."
	tg := tgtest.New(t)
	dir := t.TempDir()
	cfg := schedCrashConfig(dir, tg.URL)
	_, err := config.Init(cfg)
	require.NoError(t, err)

	app, err := Open(cfg, &Options{NoSync: true})
	require.NoError(t, err)
	ctx := context.Background()
	sid, _, err := app.Chats().Session(ctx, agents.Inbound{Gateway: "telegram", ChatType: "private", ChatID: "42", SenderID: "42"})
	require.NoError(t, err)
	at := time.Now().Add(time.Hour)
	sc, err := app.Schedules().Create(ctx, sched.Schedule{Agent: "assistant", Timing: sched.Timing{At: &at},
		Destination: sched.Destination{Gateway: "telegram", ChatID: "42"}, Payload: sched.Payload{Kind: sched.KindMessage, Text: reminder}})
	require.NoError(t, err)
	require.NoError(t, app.Close())

	// The child's clock is an hour and a second ahead: the reminder is due
	// as it starts.
	ahead := time.Hour + time.Second
	cmd := exec.Command(os.Args[0], "-test.run=^TestSchedCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), schedCrashEnv+"="+dir, schedCrashTG+"="+tg.URL, schedCrashStage+"="+stage,
		schedCrashAhead+"="+strconv.Itoa(int(ahead/time.Second)))
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	lines := make(chan string, 8)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	for line := ""; line != stage; {
		line = recv(t, lines, "the child reaching "+stage)
		require.Contains(t, []string{"running", stage}, line, "child: %s", line)
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	assert.Zero(t, count(tg, 42, reminder), "the child delivered nothing")
	// What the kill left: in the commit, nothing; after it, the run.
	st, err := storage.Open(cfg.DBPath(), nil)
	require.NoError(t, err)
	left, runs, err := sched.New(sched.Options{DB: sched.FromStore(st)}).Get(ctx, sc.ID)
	require.NoError(t, err)
	require.NoError(t, st.Close())
	if stage == "in-commit" {
		assert.Equal(t, sched.Active, left.Status, "not recorded")
		assert.Empty(t, runs)
	} else {
		assert.Equal(t, sched.Completed, left.Status, "recorded")
		assert.Len(t, runs, 1)
	}

	clock := &testClock{offset: ahead}
	d := serveWith(t, cfg, clock.now)
	waitSaid(t, d, sid, reminder)
	_, delivers := any((*TelegramGateway)(nil)).(Follower)
	if delivers {
		tg.Wait(t, "the reminder", func() bool { return count(tg, 42, reminder) > 0 })
	} else {
		t.Log("the Telegram gateway cannot deliver a session it did not start in this build (Follower): delivery is not checked")
	}
	got, runs, err := localSchedule(t, d, sc.ID)
	require.NoError(t, err)
	d.shutdown(t)
	if delivers {
		assert.Equal(t, 1, count(tg, 42, reminder), "delivered once")
	}
	assert.Equal(t, sched.Completed, got.Status)
	require.Len(t, runs, 1, "one run logged: %+v", runs)
	assert.Equal(t, sched.RunFired, runs[0].Outcome)
	assert.Equal(t, sid, runs[0].SessionID)

	st, err = storage.Open(cfg.DBPath(), nil)
	require.NoError(t, err)
	defer st.Close()
	stored := 0
	require.NoError(t, runtime.ReadEvents(st, sid, 0, func(e runtime.Event) error {
		if e.Origin == sched.Origin(sc.ID) {
			stored++
		}
		return nil
	}))
	assert.Equal(t, 1, stored, "the reminder is stored once")
}

// localSchedule reads a schedule through the daemon's API.
func localSchedule(t *testing.T, d *daemon, id string) (sched.Schedule, []sched.Run, error) {
	t.Helper()
	var got struct {
		sched.Schedule
		Log []sched.Run `json:"run_log"`
	}
	d.call(t, "GET", "/api/v1/schedules/"+id, "", 200, &got)
	return got.Schedule, got.Log, nil
}

// waitSaid follows the session through the daemon's API until the
// assistant said text in it.
func waitSaid(t *testing.T, d *daemon, sid, text string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	found := errors.New("found")
	err := httpapi.NewClient(d.url, httpapi.ClientOptions{}).Events(ctx, sid, 0, false, func(e runtime.Event) error {
		if e.Type == runtime.EvAssistant && e.Content == text {
			return found
		}
		return nil
	})
	require.ErrorIs(t, err, found, "%q in session %s", text, sid)
}

package agents

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const hbSpec = header + "spec:\n  model: {provider: ollama, name: m}\n"

func TestLoad_HeartbeatOff(t *testing.T) {
	a, err := Load(writeAgent(t, map[string]string{FileName: hbSpec}))
	require.NoError(t, err)
	assert.Nil(t, a.Heartbeat)
}

func TestLoad_HeartbeatFileAlone(t *testing.T) {
	dir := writeAgent(t, map[string]string{FileName: hbSpec, HeartbeatFile: "check the mail"})
	a, err := Load(dir)
	require.NoError(t, err)
	require.NotNil(t, a.Heartbeat)
	assert.Equal(t, &Heartbeat{Every: 30 * time.Minute, Prompt: "check the mail", PromptFile: HeartbeatFile}, a.Heartbeat)
	assert.Contains(t, a.Files, filepath.Join(dir, HeartbeatFile), "an edit reloads the agent")
	assert.Equal(t, "every 30m, to the agent's notify settings or the chat it last talked with, instructions from HEARTBEAT.md",
		a.Heartbeat.Summary())
}

func TestLoad_HeartbeatSpec(t *testing.T) {
	yaml := hbSpec + "  heartbeat:\n    every: 1h30m\n    active_hours: \"22:00-06:00\"\n" +
		"    deliver_to: {gateway: telegram, chat_id: \"-100123\"}\n    prompt: prompts/hb.md\n"
	a, err := Load(writeAgent(t, map[string]string{FileName: yaml, "prompts/hb.md": "look around", HeartbeatFile: "unused"}))
	require.NoError(t, err)
	assert.Equal(t, &Heartbeat{Every: 90 * time.Minute, ActiveHours: "22:00-06:00",
		DeliverTo: &HeartbeatTarget{Gateway: "telegram", ChatID: "-100123"},
		Prompt:    "look around", PromptFile: "prompts/hb.md"}, a.Heartbeat)
	assert.Equal(t, "every 1h30m between 22:00-06:00, to telegram chat -100123, instructions from prompts/hb.md", a.Heartbeat.Summary())
}

func TestLoad_HeartbeatSpecWithoutFile(t *testing.T) {
	a, err := Load(writeAgent(t, map[string]string{FileName: hbSpec + "  heartbeat: {every: 2h}\n"}))
	require.NoError(t, err)
	require.NotNil(t, a.Heartbeat)
	assert.Equal(t, 2*time.Hour, a.Heartbeat.Every)
	assert.Equal(t, DefaultHeartbeatPrompt, a.Heartbeat.Prompt)
	assert.Empty(t, a.Heartbeat.PromptFile)
	assert.Empty(t, a.Warnings)
}

func TestLoad_HeartbeatWarnings(t *testing.T) {
	t.Run("named file missing", func(t *testing.T) {
		a, err := Load(writeAgent(t, map[string]string{FileName: hbSpec + "  heartbeat:\n    prompt: hb.md\n"}))
		require.NoError(t, err)
		require.NotNil(t, a.Heartbeat)
		assert.Equal(t, DefaultHeartbeatPrompt, a.Heartbeat.Prompt)
		require.Len(t, a.Warnings, 1)
		assert.Contains(t, a.Warnings[0], "agent.yaml:8: spec.heartbeat.prompt names hb.md, which does not exist")
	})
	t.Run("empty file", func(t *testing.T) {
		a, err := Load(writeAgent(t, map[string]string{FileName: hbSpec, HeartbeatFile: " \n"}))
		require.NoError(t, err)
		require.NotNil(t, a.Heartbeat)
		assert.Equal(t, DefaultHeartbeatPrompt, a.Heartbeat.Prompt)
		require.Len(t, a.Warnings, 1)
		assert.Contains(t, a.Warnings[0], "HEARTBEAT.md is empty")
	})
}

func TestLoad_HeartbeatErrors(t *testing.T) {
	tests := []struct {
		name, spec, want string
	}{
		{"bad every", "  heartbeat: {every: soon}\n", `agent.yaml:7: spec.heartbeat.every "soon" is not a duration`},
		{"no unit", "  heartbeat: {every: 30}\n", `agent.yaml:7: spec.heartbeat.every "30" is not a duration`},
		{"too often", "  heartbeat: {every: 1m}\n", "agent.yaml:7: spec.heartbeat.every 1m is out of range 5m..168h"},
		{"too rare", "  heartbeat: {every: 200h}\n", "spec.heartbeat.every 200h is out of range"},
		{"negative", "  heartbeat: {every: -30m}\n", "is out of range"},
		{"bad hours", "  heartbeat:\n    active_hours: 8-22\n", `agent.yaml:8: spec.heartbeat.active_hours "8-22" is not a window`},
		{"hour 24", "  heartbeat:\n    active_hours: \"08:00-24:00\"\n", "agent.yaml:8: spec.heartbeat.active_hours"},
		{"empty window", "  heartbeat:\n    active_hours: \"08:00-08:00\"\n", "starts and ends at the same time"},
		{"no dash", "  heartbeat:\n    active_hours: \"08:00\"\n", "is not a window"},
		{"half target", "  heartbeat:\n    deliver_to: {gateway: telegram}\n", "agent.yaml:8: spec.heartbeat.deliver_to needs a gateway and a chat_id"},
		{"bad gateway", "  heartbeat:\n    deliver_to: {gateway: heartbeat, chat_id: x}\n", "deliver_to.gateway \"heartbeat\" is not a gateway's name"},
		{"control chat", "  heartbeat:\n    deliver_to: {gateway: telegram, chat_id: \"a\\nb\"}\n", "chat_id must be 1 to 64 printable bytes"},
		{"outside prompt", "  heartbeat:\n    prompt: ../x.md\n", "agent.yaml:8: spec.heartbeat.prompt \"../x.md\" leads outside"},
		{"unknown key", "  heartbeat:\n    evry: 5m\n", "evry"},
		{"not a mapping", "  heartbeat: 30m\n", "spec.heartbeat"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, err := Load(writeAgent(t, map[string]string{FileName: hbSpec + tc.spec}))
			if err == nil { // unknown keys are warnings, as everywhere in agent.yaml
				require.NotEmpty(t, a.Warnings, "neither refused nor warned")
				assert.Contains(t, strings.Join(a.Warnings, "\n"), tc.want)
				return
			}
			assert.Contains(t, err.Error(), tc.want)
			var e *Error
			require.True(t, errors.As(err, &e), "%T", err)
		})
	}
}

func TestLoad_HeartbeatFileRefused(t *testing.T) {
	t.Run("symlink out", func(t *testing.T) {
		secret := filepath.Join(t.TempDir(), "secret")
		require.NoError(t, os.WriteFile(secret, []byte("s3cret"), 0o600))
		dir := writeAgent(t, map[string]string{FileName: hbSpec})
		require.NoError(t, os.Symlink(secret, filepath.Join(dir, HeartbeatFile)))
		_, err := Load(dir)
		require.Error(t, err)
		assert.True(t, strings.HasPrefix(err.Error(), filepath.Join(dir, HeartbeatFile)+": is a link that leads outside"), err.Error())
	})
	t.Run("symlink out named", func(t *testing.T) {
		secret := filepath.Join(t.TempDir(), "secret")
		require.NoError(t, os.WriteFile(secret, []byte("s3cret"), 0o600))
		dir := writeAgent(t, map[string]string{FileName: hbSpec + "  heartbeat: {prompt: hb.md}\n"})
		require.NoError(t, os.Symlink(secret, filepath.Join(dir, "hb.md")))
		_, err := Load(dir)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "agent.yaml:7: spec.heartbeat.prompt hb.md is a link that leads outside")
	})
	t.Run("symlink inside", func(t *testing.T) {
		dir := writeAgent(t, map[string]string{FileName: hbSpec, "notes/hb.md": "inside"})
		require.NoError(t, os.Symlink("notes/hb.md", filepath.Join(dir, HeartbeatFile)))
		a, err := Load(dir)
		require.NoError(t, err)
		assert.Equal(t, "inside", a.Heartbeat.Prompt)
	})
	t.Run("fifo", func(t *testing.T) {
		dir := writeAgent(t, map[string]string{FileName: hbSpec})
		require.NoError(t, syscall.Mkfifo(filepath.Join(dir, HeartbeatFile), 0o600))
		done := make(chan error, 1)
		go func() { _, err := Load(dir); done <- err }()
		select {
		case err := <-done:
			require.Error(t, err)
			assert.Contains(t, err.Error(), "named pipe")
		case <-time.After(10 * time.Second):
			t.Fatal("Load blocked on a FIFO")
		}
	})
	t.Run("folder", func(t *testing.T) {
		dir := writeAgent(t, map[string]string{FileName: hbSpec, HeartbeatFile + "/x": "x"})
		_, err := Load(dir)
		require.Error(t, err)
		assert.Contains(t, err.Error(), HeartbeatFile)
	})
	t.Run("huge", func(t *testing.T) {
		dir := writeAgent(t, map[string]string{FileName: hbSpec, HeartbeatFile: strings.Repeat("x", MaxHeartbeatPrompt+1)})
		_, err := Load(dir)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "HEARTBEAT.md: is larger than 64 KiB")
	})
	t.Run("at the limit", func(t *testing.T) {
		dir := writeAgent(t, map[string]string{FileName: hbSpec, HeartbeatFile: strings.Repeat("x", MaxHeartbeatPrompt)})
		a, err := Load(dir)
		require.NoError(t, err)
		assert.Len(t, a.Heartbeat.Prompt, MaxHeartbeatPrompt)
	})
}

func TestParseActiveHours(t *testing.T) {
	for _, ok := range []string{"08:00-22:00", "22:00-06:00", "00:00-23:59", "08:00-00:00"} {
		assert.NoError(t, ParseActiveHours(ok), ok)
	}
	for _, bad := range []string{"", "-", "8:00-22:00", "08:00-22:60", "24:00-01:00", "08:00-08:00", "08:00 - 22:00",
		"08:00-22:00-23:00", "0a:00-22:00", "08:00", "+8:00-22:00"} {
		assert.Error(t, ParseActiveHours(bad), bad)
	}
}

// FuzzParseActiveHours checks that no window, however odd, panics the
// parser, and that one it accepts is exactly two distinct HH:MM times.
func FuzzParseActiveHours(f *testing.F) {
	for _, s := range []string{"08:00-22:00", "22:00-06:00", "24:00-01:00", "-", "08:00-08:00", "٠٨:٠٠-22:00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if ParseActiveHours(s) != nil {
			return
		}
		a, b, _ := strings.Cut(s, "-")
		ma, errA := clock(a)
		mb, errB := clock(b)
		if len(s) != 11 || errA != nil || errB != nil || ma == mb {
			t.Fatalf("accepted %q", s)
		}
	})
}

package lite

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/telegram/tgtest"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// A Telegram chat whose agent used its daily token budget gets the
// budget's sentence as the answer to its next message; App.ReadUsage
// reports the call that was made.
func TestUsage_BudgetInTelegram(t *testing.T) {
	app, tg, _ := tgApp(t, "")
	file := filepath.Join(app.Config.AgentsDir, "assistant", "agent.yaml")
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	edited := strings.Replace(string(data), "# daily_token_budget: 200000", "daily_token_budget: 1", 1)
	require.NotEqual(t, string(data), edited)
	require.NoError(t, os.WriteFile(file, []byte(edited), 0o644))

	say(t, app, tg, "hi")
	tg.Queue(tgtest.Private(42, "again"))
	tg.Wait(t, "the refusal", func() bool { return len(tg.Texts(42)) == 2 })
	refusal := tg.Texts(42)[1]
	assert.True(t, strings.HasPrefix(refusal, "⚠️ assistant has used its daily token budget ("), refusal)
	assert.Contains(t, refusal, "raise spec.session.daily_token_budget to allow more")

	rep, err := app.ReadUsage(context.Background(), runtime.UsageQuery{By: runtime.UsageByAgent})
	require.NoError(t, err)
	require.Len(t, rep.Rows, 1)
	assert.Equal(t, "assistant", rep.Rows[0].Key)
	assert.EqualValues(t, 1, rep.Rows[0].Calls)
}

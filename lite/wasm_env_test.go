package lite

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A WASM tool's manifest picks its env: from what environ offers: never
// the daemon's secrets.
func TestEnviron_HidesSecrets(t *testing.T) {
	for _, k := range []string{"OPENAI_API_KEY", "TELEGRAM_BOT_TOKEN", "AGNX_API_TOKEN", "DB_PASSWORD", "Aws_Secret_Access_Key"} {
		t.Setenv(k, "secret-value")
	}
	t.Setenv("GLOSSARY_PATH", "/srv/glossary")
	env := environ()
	for k, v := range env {
		assert.NotEqual(t, "secret-value", v, k)
	}
	assert.Equal(t, "/srv/glossary", env["GLOSSARY_PATH"], "other variables stay available")
}

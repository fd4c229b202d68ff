package hooks

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/hooks/tmpl"
	"github.com/agnx-lite/agnx-lite/lite/httpapi"
)

func FuzzHookBody(f *testing.F) {
	f.Add([]byte(`{"repository": {"full_name": "o/r"}, "action": "opened"}`), "sha256=00", "d-1", "application/json")
	f.Add([]byte(`[1, "two", {"3": null}]`), "", "", "")
	f.Add([]byte(`"text"`), "sha1=abc", "x y", "text/plain")
	f.Add([]byte("{\"a\": 1e999}"), "sha256=", strings.Repeat("i", 200), "application/vnd.github+json")
	c := config.Hook{Agent: "a", Secret: hookSecret, Template: `{{.repository.full_name | default "?"}}: {{.action}} {{. | json}}`}
	cfg := config.Default()
	cfg.Hooks = map[string]config.Hook{"h": c}
	require.NoError(f, cfg.Validate())
	c = cfg.Hooks["h"]
	f.Fuzz(func(t *testing.T, body []byte, sig, delivery, ct string) {
		header := http.Header{}
		header.Set("X-Hub-Signature-256", sig)
		header.Set("X-GitHub-Delivery", delivery)
		header.Set("Content-Type", ct)
		assert.NotEmpty(t, hookAuth(&c, header, body), "a made-up signature never passes")
		if id, problem := deliveryID(&c, header); problem == "" {
			assert.LessOrEqual(t, len(id), maxDeliveryID)
		}
		text, err := hookMessage(&c, header, body)
		if err != nil {
			var he *httpapi.HookError
			require.ErrorAs(t, err, &he)
			assert.Contains(t, []int{400, 415, 422}, he.Status)
			return
		}
		assert.LessOrEqual(t, len(text), tmpl.MaxOutput)
	})
}

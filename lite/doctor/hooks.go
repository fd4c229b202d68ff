package doctor

import (
	"maps"
	"slices"

	"github.com/agnx-lite/agnx-lite/lite/config"
)

// hookChecks lists the webhooks, warning for one whose secret or token is
// empty after ${VAR} expansion: it is disabled, and answers 401 as an
// unknown hook does.
func hookChecks(cfg *config.Config) []Check {
	var out []Check
	for _, name := range slices.Sorted(maps.Keys(cfg.Hooks)) {
		h := cfg.Hooks[name]
		if h.Disabled() {
			key := "hooks." + name + ".token"
			if h.Signed {
				key = "hooks." + name + ".secret"
			}
			out = append(out, Check{Name: "hook " + name, Status: "warn",
				Detail: key + " is empty after ${VAR} expansion: the hook is disabled and refuses every delivery (401)",
				Fix:    "set the variable it names in the environment or in agnx.env"})
			continue
		}
		out = append(out, ok("hook "+name, h.Describe(name)))
	}
	return out
}

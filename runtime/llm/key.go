package llm

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// Key is an API key. It prints and logs as a placeholder so it cannot leak
// through a formatted Options or a log line.
type Key string

// String hides the key.
func (Key) String() string { return "[redacted]" }

// LogValue hides the key from slog.
func (Key) LogValue() slog.Value { return slog.StringValue("[redacted]") }

// Scrub removes the key from a server's message, in case it echoes it.
func (k Key) Scrub(msg string) string {
	if len(k) < 8 { // too short to be a real key: replacing it would garble the text
		return msg
	}
	return strings.ReplaceAll(msg, string(k), "[redacted]")
}

// KeyRefused is the error of a 401 or 403 from a hosted API: whether a key
// was sent, and env, the variable it comes from, say what to fix. detail
// is the server's own words ("" to leave them out of the sentence).
func (s *Server) KeyRefused(key Key, env string, status int, cause error, detail string) *runtime.ProviderError {
	problem := "rejected the API key"
	if key == "" {
		problem = "wants an API key"
	}
	fix := "check the API key configured for this provider"
	if env != "" {
		fix = "set " + env + " to a valid key"
	}
	code := strconv.Itoa(status)
	if detail != "" {
		code += ": " + detail
	}
	return s.Err(runtime.ErrAuth, status, cause, "%s %s (%s): %s", s.Where(), problem, code, fix)
}

// NamedModel rewrites a model-not-found error now that the model's name
// is known.
func (s *Server) NamedModel(err error, model string) error {
	var pe *runtime.ProviderError
	if errors.As(err, &pe) && pe.Kind == runtime.ErrModelNotFound {
		pe.Message = fmt.Sprintf("%s has no model %q: check spec.model.name in the agent's agent.yaml", s.Where(), model)
	}
	return err
}

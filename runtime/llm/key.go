package llm

import "log/slog"

// Key is an API key. It prints and logs as a placeholder so it cannot leak
// through a formatted Options or a log line.
type Key string

// String hides the key.
func (Key) String() string { return "[redacted]" }

// LogValue hides the key from slog.
func (Key) LogValue() slog.Value { return slog.StringValue("[redacted]") }

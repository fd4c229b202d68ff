package config

import "log/slog"

// Secret is a token or password from the config. It prints, logs and
// marshals to JSON as "[redacted]" (or "" when empty), so that it never
// reaches a log line, an error or an API response; Value reads it.
type Secret string

const redacted = "[redacted]"

// Value returns the secret itself.
func (s Secret) Value() string { return string(s) }

// String hides the secret from fmt's %v, %s and %q.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return redacted
}

// GoString hides the secret from %#v.
func (s Secret) GoString() string { return `"` + s.String() + `"` }

// LogValue hides the secret from log/slog.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// MarshalJSON hides the secret when a struct holding it is encoded, as
// slog's JSON handler does with structs.
func (s Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + s.String() + `"`), nil }

var _ slog.LogValuer = Secret("")

package agents

import (
	"errors"
	"slices"
)

// ToolEnv is a tool's env: key, which takes one of two forms. A cli tool
// lists variable names, each taken from the operator's sandbox.env; an MCP
// server maps names to values, where ${env:NAME} takes NAME from the
// daemon (for an agent's own entry, only from sandbox.env). A list given
// to an MCP server means NAME: ${env:NAME} for each name.
type ToolEnv struct {
	// Names is the list form, Values the mapping form; at most one is set.
	Names  []string
	Values map[string]string
}

// Len is how many variables the env names.
func (e ToolEnv) Len() int { return len(e.Names) + len(e.Values) }

// Map is the env as name → value: the mapping form as it is, the list
// form as NAME: ${env:NAME}.
func (e ToolEnv) Map() map[string]string {
	if e.Len() == 0 {
		return nil
	}
	m := make(map[string]string, e.Len())
	for _, n := range e.Names {
		m[n] = "${env:" + n + "}"
	}
	for k, v := range e.Values {
		m[k] = v
	}
	return m
}

// IsList reports whether the env was written as a list of names.
func (e ToolEnv) IsList() bool { return e.Values == nil && e.Names != nil }

// UnmarshalYAML reads either form (goccy/go-yaml's InterfaceUnmarshaler).
func (e *ToolEnv) UnmarshalYAML(unmarshal func(any) error) error {
	var names []string
	if err := unmarshal(&names); err == nil {
		*e = ToolEnv{Names: names}
		return nil
	}
	var values map[string]string
	if err := unmarshal(&values); err != nil {
		return errors.New("env must be a list of variable names or a mapping of names to values")
	}
	*e = ToolEnv{Values: values}
	return nil
}

// MarshalYAML writes the form it was read in.
func (e ToolEnv) MarshalYAML() (any, error) {
	if e.Values != nil {
		return e.Values, nil
	}
	return slices.Clone(e.Names), nil
}

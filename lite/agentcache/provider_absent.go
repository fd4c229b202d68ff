package agentcache

import (
	"context"
	"fmt"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// providerOrAbsent is NewProvider for work that calls no model (tool run):
// a provider that cannot be built (its API key is not set) becomes one
// that fails with the same sentence if it is ever asked, so the agent's
// tools load without the key.
func providerOrAbsent(m agents.Model) (runtime.Provider, error) {
	p, err := NewProvider(m)
	if err != nil {
		return absentProvider{err}, nil
	}
	return p, nil
}

// absentProvider stands for a provider that could not be built.
type absentProvider struct{ err error }

var _ runtime.Provider = absentProvider{}

// Stream fails with why the provider could not be built.
func (a absentProvider) Stream(context.Context, *runtime.Request, func(runtime.Delta)) (*runtime.Response, error) {
	return nil, fmt.Errorf("no model for this agent: %w", a.err)
}

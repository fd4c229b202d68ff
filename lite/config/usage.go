package config

import (
	"math"
	"strings"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// Price is what one model costs, in US dollars per million tokens
// (an agnx-lite extension, for cost estimates in usage reports and
// /metrics). CacheRead and CacheWrite are the prices of prompt tokens the
// provider's prompt cache served and stored; unset, they cost as Input.
type Price struct {
	// Input and Output are the prices, in US dollars, of a million prompt
	// and of a million completion tokens (0 to 10000).
	Input  float64 `yaml:"input"`
	Output float64 `yaml:"output"`
	// CacheRead and CacheWrite are those of a million prompt tokens the
	// provider's cache served and stored; unset, the Input price.
	CacheRead  *float64 `yaml:"cache_read"`
	CacheWrite *float64 `yaml:"cache_write"`
}

// maxPrice bounds a price per million tokens: a typo of a few orders of
// magnitude is caught, every real model fits.
const maxPrice = 10000

// maxPrices bounds how many models prices may list.
const maxPrices = 1000

// Runtime is p as the runtime uses it.
func (p Price) Runtime() runtime.Price {
	out := runtime.Price{Input: p.Input, Output: p.Output, CacheRead: p.Input, CacheWrite: p.Input}
	if p.CacheRead != nil {
		out.CacheRead = *p.CacheRead
	}
	if p.CacheWrite != nil {
		out.CacheWrite = *p.CacheWrite
	}
	return out
}

// RuntimePrices are the prices by model name; nil when none is set.
func (c *Config) RuntimePrices() map[string]runtime.Price {
	if len(c.Prices) == 0 {
		return nil
	}
	out := make(map[string]runtime.Price, len(c.Prices))
	for model, p := range c.Prices {
		out[model] = p.Runtime()
	}
	return out
}

// UsageOptions is how the loop counts usage: days in the scheduler's
// time zone, the default daily token budget.
func (c *Config) UsageOptions() runtime.UsageOptions {
	return runtime.UsageOptions{Location: c.Scheduler.Location(), DailyTokenBudget: c.Sessions.DailyTokenBudget}
}

// validatePrices checks every price is a number from 0 to maxPrice and
// every key is one a price has: a misspelt cache_reads would otherwise
// price cached tokens as input without a word.
func (c *Config) validatePrices() error {
	if len(c.Prices) > maxPrices {
		return c.errorf("prices", "prices lists %d models, more than %d: keep the models your agents use", len(c.Prices), maxPrices)
	}
	if c.doc != nil {
		for _, u := range c.doc.Unknown {
			if strings.Contains(u.Msg, " in prices") {
				return u
			}
		}
	}
	for model, p := range c.Prices {
		path := "prices." + model
		if strings.TrimSpace(model) == "" {
			return c.errorf("prices", "prices has an empty model name: use the name the agents give as spec.model.name")
		}
		for _, f := range []struct {
			key string
			v   *float64
		}{{"input", &p.Input}, {"output", &p.Output}, {"cache_read", p.CacheRead}, {"cache_write", p.CacheWrite}} {
			if f.v == nil {
				continue
			}
			if v := *f.v; math.IsNaN(v) || v < 0 || v > maxPrice {
				return c.errorf(path+"."+f.key, "prices.%s.%s must be from 0 to %d US dollars per million tokens",
					model, f.key, maxPrice)
			}
		}
	}
	return nil
}

package config

import "github.com/agnx-lite/agnx-lite/lite/workers"

// validateWorkers checks workers: and fills in each entry's defaults.
func (c *Config) validateWorkers() error {
	name, ferr := workers.CheckAll(c.Workers)
	if ferr == nil {
		return nil
	}
	path := "workers"
	if name != "" {
		path += "." + name
		if ferr.Key != "" {
			path += "." + ferr.Key
		}
	}
	return c.errorf(path, "%s", ferr.Msg)
}

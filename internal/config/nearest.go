package config

import (
	"errors"
	"os"
	"path/filepath"
)

// LoadNearest loads the nearest config file (FileName) in dir or above it,
// for the commands that also run outside a project (zerg doctor): nil, nil
// when there is none, or when getwd fails (no directory to look from); the
// error of one that is there and does not load.
func LoadNearest(getwd func() (string, error)) (*Config, error) {
	dir, err := getwd()
	if err != nil {
		return nil, nil
	}
	for {
		p := filepath.Join(dir, filepath.FromSlash(FileName))
		if _, err := os.Stat(p); err == nil {
			cfg, err := Load(p)
			if err != nil {
				return nil, err
			}
			return &cfg, nil
		} else if !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil, nil
		}
		dir = parent
	}
}

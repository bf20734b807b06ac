package config

import (
	"errors"
	"os"
)

// LoadOrDefault is Load of the config file at path, or the defaults when
// there is no file there: a project zerg init has not set up yet still
// runs. Only a missing file means the defaults; one that cannot be read or
// does not parse is Load's error, naming path.
func LoadOrDefault(path string) (Config, error) {
	return orDefault(path, func() (Config, error) { return Load(path) })
}

// orDefault is the one rule of LoadOrDefault and LoadRepo: only a missing
// file at path means the defaults; anything else is what load says, so a
// file zerg cannot read is an error, never a run with settings the user did
// not write.
func orDefault(path string, load func() (Config, error)) (Config, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return Default(), nil
	}
	return load()
}

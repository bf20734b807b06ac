package cast

import (
	"fmt"
	"strings"
)

// Options are the settings of a worker pool, read from a loosely typed map
// such as decoded YAML or JSON.
type Options struct {
	Workers int
	Verbose bool
	Name    string
}

// ToOptionsE reads Options from i, a map: "workers" is an int in [1, 64]
// (default 4), "verbose" a bool or a yes/no/on/off word (default false),
// "name" a string. Keys are case-insensitive; an unknown key is an error.
func ToOptionsE(i interface{}) (Options, error) {
	m, err := ToStringMapE(i)
	if err != nil {
		return Options{}, err
	}
	o := Options{Workers: 4}
	for k, v := range m {
		switch strings.ToLower(k) {
		case "workers":
			if o.Workers, err = ToIntInRangeE(v, 1, 64); err != nil {
				return Options{}, fmt.Errorf("workers: %w", err)
			}
		case "verbose":
			if o.Verbose, err = ToBoolWordE(v); err != nil {
				return Options{}, fmt.Errorf("verbose: %w", err)
			}
		case "name":
			if o.Name, err = ToStringE(v); err != nil {
				return Options{}, fmt.Errorf("name: %w", err)
			}
		default:
			return Options{}, fmt.Errorf("unknown option %q", k)
		}
	}
	return o, nil
}

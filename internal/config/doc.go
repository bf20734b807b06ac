// Package config loads, checks and documents the project configuration, .zerg/config.yaml.
package config

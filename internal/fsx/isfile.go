package fsx

import "os"

// IsFile reports whether p is a regular file (through symlinks): what a
// command reads as a file, not a directory or a device.
func IsFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

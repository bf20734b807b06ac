package fsx

import (
	"errors"
	"syscall"
	"time"
)

// NoSpaceWait and NoSpaceTries are how zerg's own records wait for room
// when the disk is full: a full disk is usually a worker's doing, which
// zerg's disk watch stops and removes within a second or two
// (docs/resilience.md). The room the coordinator holds back for its records
// is no guarantee on its own: a worker still writing when it is given back
// can take it before the watch stops that worker.
var (
	NoSpaceWait  = 100 * time.Millisecond
	NoSpaceTries = 100
)

// IsNoSpace reports whether err says the disk (or the user's quota) is full.
func IsNoSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// WaitForRoom runs write, and again every NoSpaceWait while it fails for
// want of space, up to NoSpaceTries times in all. write must leave nothing
// behind when it fails, so that trying again is safe.
func WaitForRoom(write func() error) error {
	for try := 1; ; try++ {
		err := write()
		if err == nil || !IsNoSpace(err) || try >= NoSpaceTries {
			return err
		}
		time.Sleep(NoSpaceWait)
	}
}

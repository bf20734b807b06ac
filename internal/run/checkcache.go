package run

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/zergrush/zerg/internal/fsx"
)

// A rush starts with the check of its commands on the base (zerg check). The
// same check, run again minutes later on the same base with the same
// commands, config and zerg, can only find what the first one found unless
// the machine changed, and it costs seconds of the rush (every verification
// and gate once). A passing check is therefore remembered for checkReuseFor
// and a rush reuses it; zerg check itself always runs the commands (and
// renews what is remembered), so it is the way to look again.
const checkReuseFor = time.Hour

// checkRecord is a passing check as remembered in the run's directory.
type checkRecord struct {
	Key    string      `json:"key"`
	At     time.Time   `json:"at"`
	Report CheckReport `json:"report"`
}

// checkKey names what a check's outcome depends on: the base, each command
// (with the tasks or gate it is for and its timeout), the sections of the
// config that shape where and how commands run, the PATH they are looked up
// in, and the zerg binary itself (a newer zerg may check more).
func checkKey(opts Options, base string, cmds []checkCommand) string {
	type command struct {
		What, Command string
		Names         []string
		Timeout       time.Duration
	}
	c := opts.Config
	k := struct {
		Base     string
		Commands []command
		Mode     string
		Sections []any
		Path     string
		Zerg     string
	}{Base: base, Mode: c.Mode, Path: os.Getenv("PATH"), Zerg: executableStamp()}
	for _, cmd := range cmds {
		k.Commands = append(k.Commands, command{cmd.What, cmd.Command, cmd.Names, cmd.timeout})
	}
	k.Sections = []any{c.Verification, c.Gates, c.Env, c.Egress, c.Sandbox, c.Container, c.Toolchains, c.Caches, c.Claude.Path}
	b, err := json.Marshal(k)
	if err != nil {
		return "" // never matches: the check runs
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// executableStamp identifies the running zerg binary by path, size and
// modification time: a rebuilt zerg does not reuse an older one's check.
func executableStamp() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	fi, err := os.Stat(exe)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%s\x00%d\x00%d", exe, fi.Size(), fi.ModTime().UnixNano())
}

// reusableCheck is the remembered check for key when it passed less than
// checkReuseFor before now, else nil.
func reusableCheck(paths Paths, key string, now time.Time) *CheckReport {
	if key == "" {
		return nil
	}
	b, err := os.ReadFile(paths.CheckRecord())
	if err != nil {
		return nil
	}
	var rec checkRecord
	if json.Unmarshal(b, &rec) != nil || rec.Key != key || rec.Report.Problems > 0 {
		return nil
	}
	age := now.Sub(rec.At)
	if age < 0 || age >= checkReuseFor {
		return nil
	}
	rep := rec.Report
	rep.ReusedFrom = &rec.At
	return &rep
}

// rememberCheck keeps a check that found no environment problem for the
// next rush; one that found problems forgets the last passing one. A
// failure to write only costs the next rush its own check.
func rememberCheck(paths Paths, key string, rep *CheckReport, now time.Time) {
	if rep.Problems > 0 || key == "" {
		_ = os.Remove(paths.CheckRecord())
		return
	}
	b, err := json.Marshal(checkRecord{Key: key, At: now, Report: *rep})
	if err != nil {
		return
	}
	if fsx.PrivateDir(paths.RunDir) != nil {
		return
	}
	_ = fsx.WritePrivate(paths.CheckRecord(), b)
}

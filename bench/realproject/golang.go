package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
)

// The Go project: spf13/cast, a small, widely used module whose tests need
// modules of their own (frankban/quicktest and what it requires), so neither
// its suite nor the feature's tests run without its dependencies.
const (
	goModule  = "github.com/spf13/cast"
	goVersion = "v1.7.1"
)

func goProject() *project {
	return &project{
		lang:    "go",
		name:    goModule + " " + goVersion,
		source:  "the Go module proxy",
		feature: "cast-options",
		fetch:   fetchGoModule,
		deps: func(ctx context.Context, dir string) error {
			// What a person who works on the module has: its dependencies
			// in the user's module cache.
			_, err := runCmd(ctx, dir, environ("GOWORK=off"), "go", "mod", "download")
			return err
		},
		tasks: []task{
			{
				id: "L1-range", title: "Integer in a range", level: 1,
				description: "Add ToIntInRangeE(i, lo, hi) and ToIntInRange to range.go: cast like ToIntE, then refuse a value outside [lo, hi]. Test it with quicktest in range_test.go.",
				create:      []string{"range.go", "range_test.go"},
				try:         "go test -run TestToIntInRange ./...",
				edit: edit{file: "range_test.go",
					old: "\t\t{\"many\", 1, 64, 0, false},\n",
					new: "\t\t{\"many\", 1, 64, 0, false},\n\t\t{-3, -5, 5, -3, true},\n"},
				verify:   "go vet ./... && go test -run TestToIntInRange ./...",
				netProbe: true,
			},
			{
				id: "L1-words", title: "Yes/no words as booleans", level: 1,
				description: "Add ToBoolWordE and ToBoolWord to words.go: like ToBoolE, and also yes/no, y/n, on/off in any case and with spaces around. Test it in words_test.go.",
				create:      []string{"words.go", "words_test.go"},
				try:         "go test -run TestToBoolWord ./...",
				// The first draft forgets the spaces around a word: its own
				// test fails until the edit.
				edit: edit{file: "words.go",
					old: "strings.ToLower(s)",
					new: "strings.ToLower(strings.TrimSpace(s))"},
				verify: "go test -run TestToBoolWord ./...",
			},
			{
				id: "L2-options", title: "Options from a map", level: 2, deps: []string{"L1-range", "L1-words"},
				description: "Add Options and ToOptionsE to options.go: read workers (an int in [1, 64], default 4, with ToIntInRangeE), verbose (ToBoolWordE) and name from a loosely typed map; an unknown key is an error. Test it in options_test.go.",
				create:      []string{"options.go", "options_test.go"},
				read:        []string{"range.go", "words.go"},
				try:         "go test -run TestToOptions ./...",
				edit: edit{file: "options_test.go",
					old: "\t\tmap[string]interface{}{\"colour\": \"red\"},\n",
					new: "\t\tmap[string]interface{}{\"colour\": \"red\"},\n\t\tmap[string]interface{}{\"name\": []int{1}},\n"},
				verify: "go vet ./... && go test ./...",
			},
		},
		gates: []gate{{"vet", "go vet ./..."}, {"test", "go test ./..."}},
		// -count=1: the suite runs, whatever the test cache holds.
		suite: "go vet ./... && go test -count=1 ./...",
	}
}

// fetchGoModule downloads goModule@goVersion through the module proxy into
// the user's module cache and copies its source out, writable.
func fetchGoModule(ctx context.Context, dir string) error {
	tmp, err := os.MkdirTemp("", "realproject-fetch-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	// Outside any module, so that nothing but the module itself is resolved.
	out, err := runCmd(ctx, tmp, environ("GOWORK=off", "GOFLAGS=-mod=mod"), "go", "mod", "download", "-json", goModule+"@"+goVersion)
	if err != nil {
		return err
	}
	var m struct{ Dir, Error string }
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		return fmt.Errorf("go mod download -json: %v", err)
	}
	if m.Error != "" || m.Dir == "" {
		return fmt.Errorf("go mod download %s@%s: %s", goModule, goVersion, m.Error)
	}
	// os.CopyFS writes files 0666 and directories 0777 (less the umask): the
	// module cache's read-only modes are not copied.
	return os.CopyFS(dir, os.DirFS(m.Dir))
}

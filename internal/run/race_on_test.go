//go:build race

package run

// raceEnabled: the tests run under the race detector (go test -race).
const raceEnabled = true

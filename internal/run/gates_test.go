package run

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/config"
)

// slowGates is a merged level whose gates each take a while, recording how
// many ran at once.
type slowGates struct {
	mu        sync.Mutex
	now, most int
	exits     map[string]int
	ran       []string
	sleep     time.Duration
}

func (m *slowGates) Head() string { return "head" }
func (m *slowGates) Discard()     {}
func (m *slowGates) RunGate(_ context.Context, g config.Gate) (int, string) {
	m.mu.Lock()
	m.now++
	m.most = max(m.most, m.now)
	m.ran = append(m.ran, g.Name)
	m.mu.Unlock()
	time.Sleep(m.sleep)
	m.mu.Lock()
	m.now--
	m.mu.Unlock()
	return m.exits[g.Name], g.Name + " output"
}

func TestRunGatesSideBySideInOrder(t *testing.T) {
	gates := []config.Gate{{Name: "vet", Required: true}, {Name: "lint"}, {Name: "test", Required: true}, {Name: "race", Required: true}}
	m := &slowGates{sleep: 50 * time.Millisecond, exits: map[string]int{"lint": 1, "test": 2, "race": 3}}
	runs := runGates(context.Background(), m, gates)
	if len(m.ran) != 4 {
		t.Fatalf("ran %v, want every gate", m.ran)
	}
	if runtime.NumCPU() > 1 && m.most < 2 {
		t.Errorf("at most %d gate(s) ran at once on %d CPUs, want them side by side", m.most, runtime.NumCPU())
	}
	if m.most > runtime.NumCPU() {
		t.Errorf("%d gates ran at once on %d CPUs", m.most, runtime.NumCPU())
	}
	// What one after another would report: up to the first required gate
	// that failed (test), the optional lint's failure included, race not.
	var names []string
	for _, r := range runs {
		names = append(names, r.gate.Name)
	}
	if got, want := names, []string{"vet", "lint", "test"}; !slices.Equal(got, want) {
		t.Fatalf("reported %v, want %v", got, want)
	}
	if runs[1].exit != 1 || runs[2].exit != 2 || runs[2].out != "test output" {
		t.Errorf("outcomes %+v", runs)
	}
	// Each gate's wall time is its own (gate_finished's duration_ms, where
	// a level's time went): at least its sleep.
	for _, r := range runs {
		if r.took < m.sleep {
			t.Errorf("gate %s took %v, recorded below its %v", r.gate.Name, r.took, m.sleep)
		}
	}

	// Control: all passing reports every gate.
	m = &slowGates{exits: map[string]int{}}
	if runs := runGates(context.Background(), m, gates); len(runs) != 4 {
		t.Errorf("passing gates: %d reported, want 4", len(runs))
	}
}

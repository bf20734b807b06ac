package diagnose

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// Words says whose problem a pattern's class is, as zerg diagnose heads a
// diagnosis: what a person is to do depends on it.
func (c Class) Words() string {
	switch c {
	case Task:
		return "the task's own problem: a retry told this can fix it"
	case Environment:
		return "the environment's problem: every worker meets it, no retry fixes it"
	case API:
		return "the model API's or the worker process's problem"
	}
	return "no known pattern fits"
}

// ErrEmpty is an output with nothing in it but space: there is nothing to
// diagnose, and saying "no known pattern fits" would mislead.
var ErrEmpty = errors.New("nothing to diagnose")

// ReadOutput reads an output (at most limit bytes of it; name says where it
// comes from in errors) and diagnoses it as in says, with the own package
// names of the project at dir ("": none). An empty output is ErrEmpty.
func ReadOutput(r io.Reader, name string, limit int64, in Input, dir string) (Diagnosis, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit))
	if err != nil {
		return Diagnosis{}, fmt.Errorf("read %s: %w", name, err)
	}
	if strings.TrimSpace(string(b)) == "" {
		return Diagnosis{}, fmt.Errorf("%s is empty: %w", name, ErrEmpty)
	}
	in.Output = string(b)
	if dir != "" {
		in.Own = ProjectNames(dir)
	}
	return Diagnose(in), nil
}

// ReadFile reads a diagnosis written as JSON (an attempt record's
// diagnosis.json). ok is false when there is none, it is unreadable, or it
// holds no hypothesis: nothing a person could be shown.
func ReadFile(path string) (d Diagnosis, ok bool) {
	b, err := os.ReadFile(path)
	if err != nil || json.Unmarshal(b, &d) != nil || len(d.Hypotheses) == 0 {
		return d, false
	}
	return d, true
}

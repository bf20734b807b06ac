package config

import (
	"encoding/json"
	"testing"
)

func TestCheckReport(t *testing.T) {
	b, err := json.Marshal(CheckReport(".zerg/config.yaml", nil))
	if want := `{"file":".zerg/config.yaml","valid":true,"problems":[]}`; err != nil || string(b) != want {
		t.Errorf("valid: %s, want %s", b, want)
	}
	ce := &Error{Problems: []Problem{
		{File: "other.yaml", Line: 3, Field: "retry.task_retries", Code: "type", Message: "not a number"},
		{Code: "version", Message: "no version"},
	}}
	r := CheckReport("cfg.yaml", ce)
	if r.Valid || len(r.Problems) != 2 {
		t.Fatalf("%+v", r)
	}
	if p := r.Problems[0]; p.Severity != "error" || p.File != "other.yaml" || p.Line != 3 || p.Field != "retry.task_retries" || p.Code != "type" || p.Message != "not a number" {
		t.Errorf("first problem: %+v", p)
	}
	if p := r.Problems[1]; p.File != "cfg.yaml" || p.Severity != "error" {
		t.Errorf("a problem without a file is the file's: %+v", p)
	}
}

// The refusal counts the problems shown above it and adds what else to do.
func TestErrorRefused(t *testing.T) {
	one := &Error{Problems: []Problem{{Message: "x"}}}
	if got := one.Refused(FileName, "").Error(); got != ".zerg/config.yaml has 1 problem; fix it (zerg config check shows them again)" {
		t.Errorf("one: %q", got)
	}
	two := &Error{Problems: []Problem{{Message: "x"}, {Message: "y"}}}
	if got := two.Refused("c.yaml", " or delete it").Error(); got != "c.yaml has 2 problems; fix it (zerg config check shows them again) or delete it" {
		t.Errorf("two: %q", got)
	}
}

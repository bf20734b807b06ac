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

package config

import "github.com/zergrush/zerg/internal/spec"

// CheckJSON is zerg config check's --json report: the same shape as graph
// validate's (file, valid, problems, in spec.ProblemJSON's keys), so a
// script reads both alike. Every config problem is an error.
type CheckJSON struct {
	File     string             `json:"file"`
	Valid    bool               `json:"valid"`
	Problems []spec.ProblemJSON `json:"problems"`
}

// CheckReport is the report of the file shown as display, whose problems
// are ce (nil: valid). A problem without a file of its own is the file's;
// no problems is [], not null.
func CheckReport(display string, ce *Error) CheckJSON {
	out := CheckJSON{File: display, Valid: ce == nil, Problems: []spec.ProblemJSON{}}
	if ce == nil {
		return out
	}
	for _, p := range ce.Problems {
		file := p.File
		if file == "" {
			file = display
		}
		out.Problems = append(out.Problems, spec.ProblemJSON{Severity: "error", Code: p.Code, File: file, Line: p.Line, Field: p.Field, Message: p.Message})
	}
	return out
}

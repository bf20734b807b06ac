package attempt

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/outcome"
	"github.com/zergrush/zerg/internal/security"
)

// A tool input that holds a secret is not written to the audit log.
func TestScreenToolInput(t *testing.T) {
	sc, err := security.NewScanner()
	if err != nil {
		t.Fatal(err)
	}
	key := "sk-ant-" + "api03-" + strings.Repeat("Zq7Xw2Lp9Rt4", 7) + "AbCdEfGhIjK-AA"
	in := Input{Scanner: sc, Worker: claude.Spec{API: claude.APISettings{APIKey: "the-real-key-of-the-gateway-0123456789"}}}
	for _, tc := range []struct {
		input string
		kept  bool
	}{
		{`{"file_path":"a.txt","content":"hello"}`, true},
		{`{"file_path":"k.txt","content":"` + key + `"}`, false},
		{`{"command":"echo ` + base64.StdEncoding.EncodeToString([]byte("the-real-key-of-the-gateway-0123456789")) + `"}`, false},
	} {
		got := string(in.screenToolInput(json.RawMessage(tc.input)))
		if (got == tc.input) != tc.kept {
			t.Errorf("%s → %s", tc.input, got)
		}
	}
}

// A workspace problem does not turn a stop, an infra or a fatal outcome
// into a task failure that spends a retry.
func TestFailTaskKeepsAnEarlierOutcome(t *testing.T) {
	for _, c := range []outcome.Class{outcome.Infra, outcome.Fatal} {
		got := failTask(Result{Class: c, Reason: "r", Detail: "d"}, "workspace", "broken .git")
		if got.Class != c || got.Reason != "r" {
			t.Errorf("%s became %s/%s", c, got.Class, got.Reason)
		}
	}
	if got := failTask(Result{Class: outcome.Success, Reason: "completed"}, "workspace", "x"); got.Class != outcome.Task || got.Reason != "workspace" {
		t.Errorf("success: %+v", got)
	}
}

func TestVerificationFailedSaysWhenNothingWasPrinted(t *testing.T) {
	if got, want := verificationFailed("grep -qx LINUS out", 1, "\n"), "verification `grep -qx LINUS out` failed (exit 1): it printed nothing"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got, want := verificationFailed("go test", 2, "a\nb\n"), "verification `go test` failed (exit 2): a ⏎ b"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

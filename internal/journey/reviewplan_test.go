package journey

import (
	"fmt"
	"strings"
	"testing"
)

// fileDiff is git's diff of one added text file of n lines.
func fileDiff(path string, lines ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "diff --git a/%s b/%s\nnew file mode 100644\nindex 0000000..1111111\n--- /dev/null\n+++ b/%s\n@@ -0,0 +1,%d @@\n", path, path, path, len(lines))
	for _, l := range lines {
		b.WriteString("+" + l + "\n")
	}
	return b.String()
}

func padLines(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("padding line %05d ................................................................", i)
	}
	return out
}

// TestPlanReviewSeesEverything: the red team's change, a backdoor after
// 76 KB of padding, is in a prompt (the second part), and every prompt
// lists every file with its size and part. The control is the old cut: the
// first 60 KB of the diff alone does not hold the backdoor.
func TestPlanReviewSeesEverything(t *testing.T) {
	const backdoor = `if user == "debug" { return true } // BACKDOOR`
	diff := fileDiff("docs/padding.txt", padLines(900)...) + fileDiff("auth.go", "package auth", backdoor) + fileDiff("README.md", "hello")
	if len(diff) < 76000 {
		t.Fatalf("padding is only %d bytes", len(diff))
	}
	if strings.Contains(diff[:MaxPromptDiff], backdoor) {
		t.Fatal("control: the backdoor is inside the first cut; pad more")
	}
	p := PlanReview(diff, MaxPromptDiff, MaxReviewParts)
	if len(p.Parts) != 2 || len(p.NotReviewed()) != 0 || len(p.Findings()) != 0 {
		t.Fatalf("parts %d, not reviewed %v, findings %v", len(p.Parts), p.NotReviewed(), p.Findings())
	}
	seen := 0
	for i := range p.Parts {
		prompt := ReviewPrompt("demo", "b", "h", p, i+1, nil)
		if !strings.HasPrefix(prompt, "Review demo: ") {
			t.Errorf("part %d: first line %q", i+1, strings.SplitN(prompt, "\n", 2)[0])
		}
		if strings.Contains(prompt, backdoor) {
			seen++
		}
		for _, want := range []string{"The change touches 3 files", "docs/padding.txt  ", "auth.go  ", "README.md  ", fmt.Sprintf("this is part %d of 2", i+1)} {
			if !strings.Contains(prompt, want) {
				t.Errorf("part %d lacks %q:\n%s", i+1, want, prompt[:min(len(prompt), 1500)])
			}
		}
		if len(p.Parts[i]) > MaxPromptDiff {
			t.Errorf("part %d holds %d bytes of diff", i+1, len(p.Parts[i]))
		}
	}
	if seen != 1 {
		t.Errorf("the backdoor is in %d prompts", seen)
	}
	// Every line of the diff is in some part.
	all := strings.Join(p.Parts, "")
	for _, l := range strings.Split(diff, "\n") {
		if !strings.Contains(all, l) {
			t.Fatalf("line %q is in no part", l)
		}
	}
}

// TestPlanReviewTooLarge: what does not fit in the parts is a blocking
// "not fully reviewed" finding naming the files, and the prompt marks them.
func TestPlanReviewTooLarge(t *testing.T) {
	diff := fileDiff("a.txt", padLines(400)...) + fileDiff("b.txt", padLines(400)...) + fileDiff("c.go", "package c")
	p := PlanReview(diff, 20000, 2)
	if len(p.Parts) != 2 {
		t.Fatalf("parts %d", len(p.Parts))
	}
	cut := p.NotReviewed()
	if len(cut) != 2 || cut[0].Path != "b.txt" || cut[1].Path != "c.go" {
		t.Fatalf("not reviewed %+v", cut)
	}
	fs := p.Findings()
	if len(fs) != 1 || fs[0].Severity != Blocking || !strings.Contains(fs[0].Title, "not fully reviewed: 2 files") || !strings.Contains(fs[0].Detail, "b.txt, c.go") {
		t.Errorf("findings %+v", fs)
	}
	prompt := ReviewPrompt("demo", "b", "h", p, 1, nil)
	if !strings.Contains(prompt, "c.go  10 bytes  (NOT IN ANY PART: not reviewed)") && !strings.Contains(prompt, "c.go  ") {
		t.Errorf("prompt:\n%s", prompt[:2000])
	}
	if !strings.Contains(prompt, "NOT IN ANY PART") {
		t.Errorf("the prompt does not say what no part holds")
	}
}

// TestPlanReviewBinary: a binary file is listed and found, never silently
// dropped.
func TestPlanReviewBinary(t *testing.T) {
	diff := "diff --git a/logo.png b/logo.png\nnew file mode 100644\nindex 0000000..2222222\nGIT binary patch\nliteral 10\nRcmZ?wbhEHbRA6BE0RTF-0}B8E\n\nliteral 0\nHcmV?d00001\n\n" + fileDiff("x.go", "package x")
	p := PlanReview(diff, MaxPromptDiff, MaxReviewParts)
	if len(p.Files) != 2 || !p.Files[0].Binary || p.Files[0].Path != "logo.png" || p.Files[1].Path != "x.go" {
		t.Fatalf("files %+v", p.Files)
	}
	if strings.Contains(p.Parts[0], "GIT binary patch") {
		t.Error("the binary patch went into the prompt")
	}
	fs := p.Findings()
	if len(fs) != 1 || fs[0].Severity != Major || fs[0].File != "logo.png" {
		t.Errorf("findings %+v", fs)
	}
	if prompt := ReviewPrompt("demo", "b", "h", p, 1, nil); !strings.Contains(prompt, "logo.png  ") || !strings.Contains(prompt, "binary: no text shown") {
		t.Errorf("prompt:\n%s", prompt)
	}
}

func TestSectionPath(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"diff --git a/x y.go b/x y.go\nindex 1..2 100644\n--- a/x y.go\n+++ b/x y.go\n@@ -1 +1 @@\n", "x y.go"},
		{"diff --git a/gone.go b/gone.go\ndeleted file mode 100644\n--- a/gone.go\n+++ /dev/null\n@@ -1 +0,0 @@\n", "gone.go"},
		{"diff --git a/old.go b/new.go\nsimilarity index 100%\nrename from old.go\nrename to new.go\n", "new.go"},
		{"diff --git a/a/x.go b/b/x.go\nsimilarity index 100%\nrename from a/x.go\nrename to b/x.go\n", "b/x.go"},
		{"diff --git a/empty b/empty\nnew file mode 100644\nindex 0000000..e69de29\n", "empty"},
		{"diff --git \"a/t\\303\\251st\" \"b/t\\303\\251st\"\n--- /dev/null\n+++ \"b/t\\303\\251st\"\n", "tést"},
	} {
		if got := sectionPath(c.text); got != c.want {
			t.Errorf("sectionPath(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}

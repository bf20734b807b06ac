package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// shopSpec copies the context-pack fixture (a bookshop spec with a dozen
// component sections, twelve tasks) into the repository at root as feature.
func shopSpec(t *testing.T, src, root, feature string) {
	t.Helper()
	if err := os.CopyFS(filepath.Join(root, ".zerg", "specs", feature), os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
}

func shopFixture(t *testing.T) string {
	t.Helper()
	src, err := filepath.Abs(filepath.Join("..", "contextpack", "testdata", "shop"))
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func TestContextShowsThePackAndWhatWasLeftOut(t *testing.T) {
	src := shopFixture(t)
	f := newFakeRun(t, "shop", false)
	shopSpec(t, src, f.root, "shop")
	// The dependency cart has a successful attempt whose worker's summary
	// tries to drive the terminal.
	dir := f.paths.AttemptDir("cart", 1)
	writeFile(t, filepath.Join(dir, "stream.jsonl"), []byte(jsonLine(t, map[string]any{
		"type": "result", "subtype": "success", "is_error": false, "result": "Cart done. " + hostile})))

	code, out, errOut := runZerg(t, "context", "checkout")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"## What to do\nTurn a cart into a pending order",
		"- cart (Shopping cart): internal/cart/cart.go\n  Its worker's summary: Cart done.",
		"### design.md › Design › Checkout and payments\n",
		"== context pack of checkout (shop): ",
		"spec: 1 of 16 sections in\n",
		"  + ",
		"design.md › Design › Inventory reservations (",
		"is under 50% of the best",
		"dependency cart: internal/cart/cart.go; summary of attempt 1\n",
		"dependency inventory: internal/inventory/reserve.go; no summary",
		"rules: none: the security rules are not fetched",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Configuration loader\n") {
		t.Errorf("an unrelated section is in the pack:\n%s", out)
	}
	if r, i := controlIn(out); i >= 0 {
		t.Errorf("control character %U at %d reached the terminal", r, i)
	}

	// The same with the feature named, as JSON.
	code, out, errOut = runZerg(t, "context", "shop", "checkout", "--json")
	if code != 0 {
		t.Fatalf("--json: exit %d: %s", code, errOut)
	}
	var js struct {
		Feature  string `json:"feature"`
		Task     string `json:"task"`
		Budget   int    `json:"budget_tokens"`
		Tokens   int    `json:"tokens"`
		Text     string `json:"text"`
		Sections []struct {
			Name     string  `json:"name"`
			Score    float64 `json:"score"`
			Included bool    `json:"included"`
			Reason   string  `json:"reason"`
		} `json:"sections"`
		Omitted []struct {
			Kind, Name, Reason string
		} `json:"omitted"`
	}
	if err := json.Unmarshal([]byte(out), &js); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if js.Feature != "shop" || js.Task != "checkout" || js.Budget != 4000 || js.Tokens == 0 || js.Tokens > js.Budget ||
		!strings.HasPrefix(js.Text, "## What to do\n") || len(js.Sections) != 16 || !js.Sections[0].Included ||
		len(js.Omitted) != 15 {
		t.Errorf("json: %+v", js)
	}
}

func TestContextBudgetComesFromTheConfig(t *testing.T) {
	src := shopFixture(t)
	f := newFakeRun(t, "shop", false)
	shopSpec(t, src, f.root, "shop")
	writeFile(t, filepath.Join(f.root, ".zerg", "config.yaml"), []byte("version: 1\ncontext:\n  token_budget: 200\nsecurity_rules:\n  enabled: false\n"))
	code, out, errOut := runZerg(t, "context", "checkout", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var js struct {
		Budget int `json:"budget_tokens"`
		Tokens int `json:"tokens"`
		Rules  struct {
			Missing string `json:"missing"`
		} `json:"rules"`
		Sections []struct {
			Included bool `json:"included"`
			Cut      bool `json:"cut"`
		} `json:"sections"`
	}
	if err := json.Unmarshal([]byte(out), &js); err != nil {
		t.Fatal(err)
	}
	if js.Budget != 200 || js.Tokens > 200 || js.Rules.Missing != "security_rules.enabled is false" {
		t.Errorf("budget %d, tokens %d, rules %q", js.Budget, js.Tokens, js.Rules.Missing)
	}
	for _, s := range js.Sections {
		if s.Included {
			t.Errorf("a section is in a pack of %d tokens: %+v", js.Tokens, s)
		}
	}
}

func TestContextUnknownTaskOrFeature(t *testing.T) {
	src := shopFixture(t)
	root := t.TempDir()
	t.Chdir(root)
	if code, _, errOut := runZerg(t, "context", "checkout"); code != ExitUsage {
		t.Errorf("outside a repository: exit %d: %s", code, errOut)
	}
	f := newFakeRun(t, "shop", false)
	shopSpec(t, src, f.root, "shop")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"context", "nope"}, `unknown task "nope" in feature shop (its tasks: config, metrics,`},
		{[]string{"context", "shop", "nope"}, `unknown task "nope" in feature shop`},
		{[]string{"context", "other", "checkout"}, `unknown feature "other": no task graph at .zerg/specs/other/task-graph.json`},
		{[]string{"context", "../shop", "checkout"}, `"../shop" is not a feature name: it contains a path separator`},
		{[]string{"context"}, "accepts between 1 and 2 arg(s)"},
	} {
		code, out, errOut := runZerg(t, c.args...)
		lines := strings.Split(strings.TrimSpace(errOut), "\n")
		if code != ExitUsage || out != "" || len(lines) != 1 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", c.args, code, out, errOut, c.want)
		}
	}
}

func TestContextWithoutARun(t *testing.T) {
	src := shopFixture(t)
	f := newFakeRun(t, "other", false) // a repository with a run of another feature…
	shopSpec(t, src, f.root, "shop")
	// …so the feature must be named: the only run is not it.
	if code, _, errOut := runZerg(t, "context", "cart"); code != ExitUsage || !strings.Contains(errOut, "no task graph") {
		t.Errorf("exit %d: %s", code, errOut)
	}
	code, out, errOut := runZerg(t, "context", "shop", "cart")
	if code != 0 || !strings.Contains(out, "== context pack of cart (shop)") ||
		!strings.Contains(out, "dependency catalog: internal/catalog/store.go; no summary") {
		t.Errorf("exit %d: %s\n%s", code, errOut, out)
	}
	// With no run at all, the only feature with a graph is meant.
	if err := os.RemoveAll(filepath.Join(f.root, ".zerg", "runs")); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runZerg(t, "context", "cart"); code != 0 || !strings.Contains(out, "== context pack of cart (shop)") {
		t.Errorf("exit %d: %s\n%s", code, errOut, out)
	}
}

package dashboard

import (
	"bufio"
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// slowTests makes L3-tests, the last task, think for a while before its
// first tool call, so the page can be watched with it running.
func slowTests(s string) string {
	const anchor = "    match: \"Task L3-tests:\"\n    turns:\n      - tools:\n"
	out := strings.Replace(s, anchor, "    match: \"Task L3-tests:\"\n    turns:\n      - delay: 4s\n        tools:\n", 1)
	if out == s {
		panic("the demo scenario's L3-tests no longer starts as this test expects; update slowTests")
	}
	return out
}

// startDashboard starts zerg dashboard and returns the URL it printed.
func startDashboard(t *testing.T, p *project, args ...string) string {
	t.Helper()
	return startDashboardWith(t, p, append([]string{"dashboard", "--open=false"}, args...))
}

// startDashboardWith starts zerg with argv (a dashboard command) and
// returns the URL it printed.
func startDashboardWith(t *testing.T, p *project, argv []string) string {
	t.Helper()
	cmd := exec.Command(zergBin, argv...)
	cmd.Dir, cmd.Env = p.dir, p.env()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			t.Error("zerg dashboard did not stop on SIGINT")
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("zerg dashboard printed no URL: %v", err)
	}
	u, ok := strings.CutPrefix(strings.TrimSpace(line), "zerg dashboard: ")
	if !ok {
		t.Fatalf("zerg dashboard printed %q", line)
	}
	return u
}

// browser starts headless Chromium and returns a tab's context.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.WindowSize(1400, 1000),
		chromedp.NoSandbox, // root in CI; the page is our own
		chromedp.Flag("disable-dev-shm-usage", true),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// within bounds one step: a rush on a loaded machine takes a while, a
// page that never shows what it should must still fail. The context has
// run once (browser started it), so its timeout does not end the browser.
func within(t *testing.T, ctx context.Context) context.Context {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(cancel)
	return c
}

func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(within(t, ctx), chromedp.FullScreenshot(100) /* 100: PNG, not JPEG */)
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(artefacts(t), name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

// TestDashboardRehearsal: during a rehearsal rush, the dashboard refuses a
// request of the run's data without a session and gives the page one for
// the token in its URL's fragment; the page follows
// the run live (L3-tests goes from running to merged while a marker set
// in the page survives: no reload); the task page of L2-shout, whose first
// attempt failed verification, shows the diff and the diagnosis; at the
// end the page's counts are zerg status --json's.
func TestDashboardRehearsal(t *testing.T) {
	ctx := browser(t)
	p := newProject(t, slowTests)
	rush, rushOut := p.start("rush", "demo", "--rehearse")
	u := startDashboard(t, p, "demo")
	pu, err := url.Parse(u)
	if err != nil || !strings.HasPrefix(pu.Fragment, "t=") || pu.RawQuery != "" || pu.Hostname() != "127.0.0.1" {
		t.Fatalf("URL %q: want 127.0.0.1 and a token in the fragment", u)
	}
	token := strings.SplitN(strings.TrimPrefix(pu.Fragment, "t="), "&", 2)[0]

	// Refused without a session (and with the token where a session or a
	// cookie would be), from Go and in the browser.
	bare := *pu
	bare.RawQuery, bare.Fragment = "", ""
	for _, c := range []struct {
		name, query string
		header      http.Header
	}{
		{name: "nothing"},
		{name: "?t=TOKEN", query: "?t=" + token},
		{name: "a wrong session", header: http.Header{"X-Zerg-Session": {"wrong"}}},
		{name: "the token as a session", header: http.Header{"X-Zerg-Session": {token}}},
		{name: "the token as a cookie", header: http.Header{"Cookie": {"zerg_dashboard=" + token}}},
	} {
		req, _ := http.NewRequest("GET", bare.String()+"api/runs/demo"+c.query, nil)
		maps.Copy(req.Header, c.header)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("GET /api/runs/demo with %s: %d, want 403", c.name, resp.StatusCode)
		}
	}
	if err := chromedp.Do(within(t, ctx), chromedp.Navigate(bare.String())); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(within(t, ctx), chromedp.Poll[bool](`document.body.innerText.includes("needs the token")`, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		refused, _ := chromedp.Run(within(t, ctx), chromedp.Text("body"))
		t.Errorf("the browser without the token got %q", refused)
	}

	// With the token: the run's page, then L3-tests running.
	tests := `#graph g.task[data-task="L3-tests"]`
	if err := chromedp.Do(within(t, ctx), chromedp.Navigate(u), chromedp.WaitVisible(`#graph svg`)); err != nil {
		t.Fatalf("the page: %v", err)
	}
	// The token left the address bar at once; the route stayed.
	if href, err := chromedp.Run(within(t, ctx), chromedp.Evaluate[string](`location.href`)); err != nil || strings.Contains(href, token) || !strings.HasSuffix(href, "#/run/demo") {
		t.Errorf("the address after the login: %q %v", href, err)
	}
	// Set once the page shows the run; a reload would lose both.
	loadedAt, err := chromedp.Run(within(t, ctx), chromedp.Evaluate[float64](`document.body.dataset.marker = "set-before-the-update"; window.zergLoadedAt`))
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(within(t, ctx), chromedp.WaitVisible(tests+`[data-status="running"]`)); err != nil {
		t.Fatalf("the page never showed L3-tests running: %v\nrush output:\n%s", err, rushOut)
	}
	screenshot(t, ctx, "running.png")
	if err := chromedp.Do(within(t, ctx), chromedp.WaitVisible(tests+`[data-status="merged"]`)); err != nil {
		t.Fatalf("L3-tests never showed merged: %v", err)
	}
	marker, err := chromedp.Run(within(t, ctx), chromedp.Evaluate[string](`document.body.dataset.marker || ""`))
	if err != nil {
		t.Fatal(err)
	}
	loadedAfter, err := chromedp.Run(within(t, ctx), chromedp.Evaluate[float64](`window.zergLoadedAt`))
	if err != nil {
		t.Fatal(err)
	}
	updates, err := chromedp.Run(within(t, ctx), chromedp.Evaluate[int](`window.zergUpdates`))
	if err != nil {
		t.Fatal(err)
	}
	if marker != "set-before-the-update" || loadedAfter != loadedAt {
		t.Errorf("the page was reloaded: marker %q, loaded at %v then %v", marker, loadedAt, loadedAfter)
	}
	if updates < 2 {
		t.Errorf("%d live updates; want the first view and at least one more", updates)
	}

	if err := rush.Wait(); err != nil {
		t.Fatalf("rush: %v\n%s", err, rushOut)
	}
	if !strings.Contains(rushOut.String(), "demo: DELIVERED (rehearsal)") {
		t.Fatalf("rush output:\n%s", rushOut)
	}

	// The end state: the page's counts are zerg status --json's.
	if err := chromedp.Do(within(t, ctx), chromedp.WaitVisible(`#state.delivered`)); err != nil {
		t.Fatalf("the page never showed the run delivered: %v", err)
	}
	pageCounts, err := chromedp.Run(within(t, ctx), chromedp.Evaluate[map[string]string](`Object.fromEntries([...document.querySelectorAll("#counts .count")].map(e => [e.dataset.status, e.querySelector("b").textContent]))`))
	if err != nil {
		t.Fatal(err)
	}
	code, so, se := p.zerg("status", "demo", "--json")
	if code != 0 {
		t.Fatalf("status: %d %s", code, se)
	}
	var v struct {
		State string `json:"state"`
		Tasks []struct {
			Status string `json:"status"`
		} `json:"tasks"`
	}
	if err := json.Unmarshal([]byte(so), &v); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"total": itoa(len(v.Tasks))}
	for _, tk := range v.Tasks {
		want[tk.Status] = itoa(atoi(want[tk.Status]) + 1)
	}
	if len(v.Tasks) == 0 || !equalMaps(pageCounts, want) {
		t.Errorf("page counts %v, zerg status --json %v", pageCounts, want)
	}
	screenshot(t, ctx, "overview.png")

	// The task page: L2-shout's failed attempt with its diff and diagnosis.
	if err := chromedp.Do(within(t, ctx),
		// A new hash, as a click on the graph gives: no page load.
		chromedp.Evaluate[chromedp.Void](`location.hash = "#/run/demo/task/L2-shout"`),
		chromedp.WaitVisible(`section.attempt[data-attempt="1"] .diagnosis`),
	); err != nil {
		main, _ := chromedp.Run(within(t, ctx), chromedp.Evaluate[string](`location.href + "\n" + document.getElementById("main").innerText.slice(0, 2000)`))
		t.Fatalf("task page: %v\n%s", err, main)
	}
	diagnosis, err := chromedp.Run(within(t, ctx), chromedp.Text(`section.attempt[data-attempt="1"] .diagnosis`))
	if err != nil {
		t.Fatal(err)
	}
	diff, err := chromedp.Run(within(t, ctx), chromedp.Text(`section.attempt[data-attempt="1"] pre.diff`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(diagnosis, "Diagnosis:") || !strings.Contains(diagnosis, "Fix:") {
		t.Errorf("diagnosis %q", diagnosis)
	}
	if !strings.Contains(diff, "+++ b/bin/shout") || !strings.Contains(diff, "+echo names | upper") {
		t.Errorf("diff %q", diff)
	}
	screenshot(t, ctx, "task.png")

	// The cost page draws its charts.
	if err := chromedp.Do(within(t, ctx),
		chromedp.Evaluate[chromedp.Void](`location.hash = "#/run/demo/cost"`),
		chromedp.WaitVisible(`.charts img`),
	); err != nil {
		t.Fatalf("cost page: %v", err)
	}
	if _, err := chromedp.Run(within(t, ctx), chromedp.Poll[bool](`[...document.querySelectorAll(".charts img")].every(i => i.complete && i.naturalWidth > 0)`, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		t.Fatalf("cost charts: %v", err)
	}
	charts, err := chromedp.Run(within(t, ctx), chromedp.Evaluate[int](`document.querySelectorAll(".charts img").length`))
	if err != nil {
		t.Fatal(err)
	}
	if charts != 4 {
		t.Errorf("%d charts, want 4", charts)
	}
	screenshot(t, ctx, "cost.png")
}

func itoa(n int) string                     { return strconv.Itoa(n) }
func atoi(s string) int                     { n, _ := strconv.Atoi(s); return n }
func equalMaps(a, b map[string]string) bool { return maps.Equal(a, b) }

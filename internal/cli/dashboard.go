package cli

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/zergrush/zerg/internal/dashboard"
	"github.com/zergrush/zerg/internal/fsx"
	"github.com/zergrush/zerg/internal/run"
)

func init() { register(newDashboardCmd) }

func newDashboardCmd(a *app) *cobra.Command {
	var addr string
	var open, remote bool
	cmd := &cobra.Command{
		Use:   "dashboard [FEATURE]",
		Short: "Serve a live web page of the repository's runs (local, token-protected)",
		Long: `Serve a web page of this repository's runs on 127.0.0.1: the task graph drawn
(levels as columns, dependencies as edges, status as colour, the critical path
marked), the workers, each task's attempts (tool calls, diff, verification output,
diagnosis) and the cost with its charts. It follows a run live from its event log
and shows finished runs as they ended. Its only source is what zerg status reads;
it never locks the log, so a rush does not wait on it.

The URL it prints carries a random token in its fragment (#t=…), which the page
exchanges for a session of its own; a request of the run's data without a
session is refused (403). The browser is opened with a file only you can read,
holding a code that works once, so that no secret is in any process's command
line. Everything is served by zerg itself: no network, no CDN. FEATURE opens
that run's page (it may start later). --addr chooses the address; one that is
not loopback needs --allow-remote, as anyone who can reach it and learns the
token sees the run. Ctrl-C stops it.`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: a.completeRuns,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			host, _, err := net.SplitHostPort(addr)
			if err != nil {
				return usageErrorf("--addr %s: give host:port, like 127.0.0.1:0 (0 picks a free port)", addr)
			}
			loopback := host == "localhost"
			if ip := net.ParseIP(host); ip != nil {
				loopback = ip.IsLoopback()
			}
			if !loopback && !remote {
				return usageErrorf("--addr %s is not a loopback address: add --allow-remote to serve the dashboard beyond this machine", addr)
			}
			cwd, err := a.getwd()
			if err != nil {
				return err
			}
			root, err := zergRepoRoot(ctx, cwd)
			if err != nil {
				return err
			}
			feature := firstArg(args)
			if feature != "" {
				if _, err := run.PathsFor(ctx, root, feature); err != nil {
					return err
				}
			}
			token, err := dashboard.NewToken()
			if err != nil {
				return err
			}
			srv, err := dashboard.New(dashboard.Options{Root: root, Token: token, Loopback: loopback})
			if err != nil {
				return err
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return usageErrorf("--addr %s: %v", addr, err)
			}
			if !loopback {
				fmt.Fprintf(a.stderr, "zerg: warning: the dashboard listens on %s, beyond this machine; anyone with the URL sees the run's code and logs\n", ln.Addr())
			}
			fmt.Fprintf(a.stdout, "zerg dashboard: %s\n", dashboardURL(ln.Addr().String(), token, feature))
			if open {
				file, done, err := dashboardLauncher(srv, ln.Addr().String(), feature)
				if err != nil {
					return err
				}
				defer done()
				openBrowser(file)
			}
			return serveDashboard(ctx, ln, srv)
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:0", "address to listen on (port 0: a free one)")
	cmd.Flags().BoolVar(&open, "open", true, "open the URL in the default browser")
	cmd.Flags().BoolVar(&remote, "allow-remote", false, "allow an --addr that is not loopback")
	return cmd
}

// dashboardURL is the page's address with a login secret in its fragment
// (#t=SECRET, then the page's route): a fragment is in no request, no
// server log and no Referer.
func dashboardURL(addr, secret, feature string) string {
	u := url.URL{Scheme: "http", Host: addr, Path: "/", Fragment: "t=" + secret}
	if feature != "" {
		u.Fragment += "&/run/" + feature
	}
	return u.String()
}

// dashboardLauncher writes the file the browser is opened with: a page
// that goes on to the dashboard with a one-time code, in a directory of
// zerg's own (mode 0700, the file 0600), so that the browser's command line
// (which /proc shows to every account) names only the file. The file goes
// once its code is used, and at the latest with done.
func dashboardLauncher(srv *dashboard.Server, addr, feature string) (string, func(), error) {
	dir, err := fsx.MkdirTemp("zerg-dashboard-")
	if err != nil {
		return "", nil, err
	}
	done := func() { _ = os.RemoveAll(dir) }
	code, err := srv.OneTimeCode(done)
	if err != nil {
		done()
		return "", nil, err
	}
	target := html.EscapeString(dashboardURL(addr, code, feature))
	page := `<!doctype html>
<meta charset="utf-8">
<meta name="referrer" content="no-referrer">
<meta http-equiv="refresh" content="0; url=` + target + `">
<title>zerg dashboard</title>
<p><a href="` + target + `">Open the zerg dashboard</a></p>
`
	file := filepath.Join(dir, "dashboard.html")
	if err := fsx.WritePrivate(file, []byte(page)); err != nil {
		done()
		return "", nil, err
	}
	return file, done, nil
}

// serveDashboard serves until ctx ends (Ctrl-C), then closes the event
// streams and shuts down.
func serveDashboard(ctx context.Context, ln net.Listener, srv *dashboard.Server) error {
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	srv.Close()
	sctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// openBrowser asks the desktop to open u (a file: never a URL with a
// secret, which the opener's and the browser's command lines would show);
// without a desktop (a server, CI) nothing happens and the printed URL is
// the way in.
func openBrowser(u string) {
	name := "xdg-open"
	if runtime.GOOS == "darwin" {
		name = "open"
	}
	if p, err := exec.LookPath(name); err == nil {
		c := exec.Command(p, u)
		if c.Start() == nil {
			go func() { _ = c.Wait() }() // reaps the opener; the page is the browser's
		}
	}
}

package dashboard

import (
	"context"
	"errors"
	"html"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"

	"github.com/zergrush/zerg/internal/fsx"
)

// URL is the page's address with a login secret in its fragment
// (#t=SECRET, then the page's route to feature's run, "" none): a fragment
// is in no request, no server log and no Referer.
func URL(addr, secret, feature string) string {
	u := url.URL{Scheme: "http", Host: addr, Path: "/", Fragment: "t=" + secret}
	if feature != "" {
		u.Fragment += "&/run/" + feature
	}
	return u.String()
}

// Launcher writes the file the browser is opened with: a page that goes on
// to the dashboard at addr with a one-time code, in a directory of zerg's
// own (mode 0700, the file 0600), so that the browser's command line (which
// /proc shows to every account) names only the file. The file goes once
// its code is used, and at the latest with done.
func (s *Server) Launcher(addr, feature string) (file string, done func(), err error) {
	dir, err := fsx.MkdirTemp("zerg-dashboard-")
	if err != nil {
		return "", nil, err
	}
	done = func() { _ = os.RemoveAll(dir) }
	code, err := s.OneTimeCode(done)
	if err != nil {
		done()
		return "", nil, err
	}
	target := html.EscapeString(URL(addr, code, feature))
	page := `<!doctype html>
<meta charset="utf-8">
<meta name="referrer" content="no-referrer">
<meta http-equiv="refresh" content="0; url=` + target + `">
<title>zerg dashboard</title>
<p><a href="` + target + `">Open the zerg dashboard</a></p>
`
	file = filepath.Join(dir, "dashboard.html")
	if err := fsx.WritePrivate(file, []byte(page)); err != nil {
		done()
		return "", nil, err
	}
	return file, done, nil
}

// Serve serves s on ln until ctx ends (Ctrl-C), then closes the event
// streams and shuts down.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	s.Close()
	sctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// OpenBrowser asks the desktop to open file (a file: never a URL with a
// secret, which the opener's and the browser's command lines would show);
// without a desktop (a server, CI) nothing happens and the printed URL is
// the way in.
func OpenBrowser(file string) {
	name := "xdg-open"
	if runtime.GOOS == "darwin" {
		name = "open"
	}
	if p, err := exec.LookPath(name); err == nil {
		c := exec.Command(p, file)
		if c.Start() == nil {
			go func() { _ = c.Wait() }() // reaps the opener; the page is the browser's
		}
	}
}

// Loopback reports whether the dashboard at addr (host:port) is reachable
// from this machine only; an addr that is not host:port is an error.
func Loopback(addr string) (bool, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, err
	}
	if ip := net.ParseIP(host); ip != nil {
		return ip.IsLoopback(), nil
	}
	return host == "localhost", nil
}

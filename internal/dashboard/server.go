package dashboard

import (
	"embed"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"strings"
	"time"

	"github.com/zergrush/zerg/internal/run"
)

//go:embed assets
var assets embed.FS

// Options configure a dashboard.
type Options struct {
	Root string // the repository's top level
	// Token is the login secret of the URL zerg dashboard prints: the page
	// exchanges it for a session (token.go).
	Token string
	// Loopback: answer only requests whose Host is a loopback name (not
	// with --allow-remote, where the host is the machine's name).
	Loopback bool
	// Poll is how often an event stream stats the log (default 250ms);
	// Refresh how often it re-reads it regardless (default 2s).
	Poll, Refresh time.Duration
}

// Server is the dashboard's HTTP handler.
type Server struct {
	src           *source
	auth          *auth
	poll, refresh time.Duration
	done          chan struct{}
	handler       http.Handler
}

// New builds a dashboard for the repository at o.Root.
func New(o Options) (*Server, error) {
	if o.Token == "" {
		return nil, errors.New("dashboard: no token")
	}
	s := &Server{src: &source{root: o.Root, paths: map[string]run.Paths{}}, poll: o.Poll, refresh: o.Refresh,
		done: make(chan struct{}), auth: &auth{token: []byte(o.Token), codes: map[string]func(){}}}
	if s.poll <= 0 {
		s.poll = 250 * time.Millisecond
	}
	if s.refresh <= 0 {
		s.refresh = 2 * time.Second
	}
	static, _ := fs.Sub(assets, "assets")
	// The page and its assets hold nothing of a run: anyone who reaches
	// the server gets them, so that the page can log in. Everything of a
	// run is under /api, behind a session.
	mux := http.NewServeMux()
	mux.Handle("GET /assets/", http.StripPrefix("/assets/", http.FileServerFS(static)))
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFileFS(w, r, static, "index.html")
	})
	mux.HandleFunc("POST /api/session", s.newSession)
	mux.HandleFunc("GET /api/runs", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, s.src.summaries(r.Context()))
	})
	mux.HandleFunc("GET /api/runs/{feature}", s.withRun(func(w http.ResponseWriter, r *http.Request, p run.Paths) {
		snap, err := snapshot(p)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		writeJSON(w, snap)
	}))
	mux.HandleFunc("GET /api/runs/{feature}/stream", s.withRun(s.stream))
	mux.HandleFunc("GET /api/runs/{feature}/tasks/{task}", s.withRun(func(w http.ResponseWriter, r *http.Request, p run.Paths) {
		page, ok, err := taskPage(p, r.PathValue("task"))
		switch {
		case err != nil:
			http.Error(w, err.Error(), http.StatusInternalServerError)
		case !ok:
			http.Error(w, "no such task in this run", http.StatusNotFound)
		default:
			writeJSON(w, page)
		}
	}))
	mux.HandleFunc("GET /api/runs/{feature}/gates/{n}", s.withRun(func(w http.ResponseWriter, r *http.Request, p run.Paths) {
		page, ok, err := gatePage(p, r.PathValue("n"))
		switch {
		case err != nil:
			http.Error(w, err.Error(), http.StatusInternalServerError)
		case !ok:
			http.Error(w, "no such gate run in this run", http.StatusNotFound)
		default:
			writeJSON(w, page)
		}
	}))
	mux.HandleFunc("GET /api/runs/{feature}/cost", s.withRun(func(w http.ResponseWriter, r *http.Request, p run.Paths) {
		page, err := costPage(p)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		writeJSON(w, page)
	}))
	mux.HandleFunc("GET /api/runs/{feature}/cost/{chart}", s.withRun(func(w http.ResponseWriter, r *http.Request, p run.Paths) {
		name, ok := strings.CutSuffix(r.PathValue("chart"), ".svg")
		if !ok {
			http.Error(w, "charts are .svg", http.StatusNotFound)
			return
		}
		b, err := costChart(p, name)
		if err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "image/svg+xml")
		_, _ = w.Write(b) // a browser that went away cannot be told
	}))
	var h http.Handler = headers(s.requireSession(mux))
	if o.Loopback {
		h = loopbackOnly(h)
	}
	s.handler = h
	return s, nil
}

// ServeHTTP serves the dashboard.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// Close ends the event streams, so a server shuts down without waiting on
// them.
func (s *Server) Close() {
	select {
	case <-s.done:
	default:
		close(s.done)
	}
}

// withRun resolves {feature} to a run of the repository (404 otherwise).
func (s *Server) withRun(h func(http.ResponseWriter, *http.Request, run.Paths)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p, err := s.src.pathsOf(r.Context(), r.PathValue("feature"))
		if err != nil {
			http.Error(w, "no such run in this repository", http.StatusNotFound)
			return
		}
		h(w, r, p)
	}
}

// headers: nothing from elsewhere (the page loads only its own assets,
// no CDN; its charts are blobs it fetched with its session), no framing,
// no caching of a run's data.
func headers(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data: blob:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(true)
	_ = enc.Encode(v) // the response: a client that went away cannot be told
}

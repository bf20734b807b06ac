package dashboard

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"net"
	"net/http"
	"strings"
	"sync"
)

// How the page proves it may read the runs, and why not with a cookie: a
// cookie for 127.0.0.1 goes to every port of that address, so a server of
// another account on another loopback port would receive it after one
// link. The page instead holds a session in its own origin's storage
// (scheme, host and port: no other port reads it) and sends it as a
// header, which no other origin can make the browser send.
//
// A session is given for a login secret: the token of the URL zerg
// dashboard prints (its fragment, which no request carries), or a
// one-time code from the launcher file zerg opens the browser with, so
// that no secret is ever in a process's argv (/proc shows argv to every
// account).
const (
	// loginHeader carries a login secret to POST /api/session.
	loginHeader = "X-Zerg-Login"
	// sessionHeader carries the session on every other /api request.
	sessionHeader = "X-Zerg-Session"
)

// NewToken is a random secret: 128 bits, hex.
func NewToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// auth holds the dashboard's secrets: the login token, the one-time codes
// not used yet, the sessions given.
type auth struct {
	token []byte
	mu    sync.Mutex
	codes map[string]func() // code → what to do once it is used
	// sessions given, in order; the oldest goes past maxSessions.
	sessions []string
}

// maxSessions bounds the sessions kept: each needs the login secret, so
// only the dashboard's own user makes them; a page beyond this many
// logins ago logs in again.
const maxSessions = 64

func equal(a, b string) bool {
	return a != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// login exchanges a login secret for a new session, "" when the secret is
// neither the token nor an unused one-time code. The comparisons are
// constant-time.
func (a *auth) login(secret string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	ok := equal(secret, string(a.token))
	for code, used := range a.codes {
		if equal(secret, code) {
			delete(a.codes, code)
			if used != nil {
				used()
			}
			ok = true
		}
	}
	if !ok {
		return ""
	}
	s, err := NewToken()
	if err != nil {
		return ""
	}
	a.sessions = append(a.sessions, s)
	if len(a.sessions) > maxSessions {
		a.sessions = a.sessions[1:]
	}
	return s
}

func (a *auth) valid(session string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	found := false
	for _, s := range a.sessions {
		found = equal(session, s) || found
	}
	return found
}

// OneTimeCode is a login secret that gives one session, for the file zerg
// dashboard opens the browser with; used runs once it has (the file can
// go).
func (s *Server) OneTimeCode(used func()) (string, error) {
	code, err := NewToken()
	if err != nil {
		return "", err
	}
	s.auth.mu.Lock()
	s.auth.codes[code] = used
	s.auth.mu.Unlock()
	return code, nil
}

// refused is the body of every 403 for want of a session.
const refused = "zerg dashboard: this page needs the token in the link zerg dashboard printed (…/#t=TOKEN)"

// requireSession refuses (403) a request without a session, but for the
// page, its assets and the login, which hold nothing of a run and are
// served to anyone who reaches the server, so that the page can log in.
// Whatever else the server answers needs the session, a route added later
// included.
func (s *Server) requireSession(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		public := p == "/" || strings.HasPrefix(p, "/assets/") || (p == "/api/session" && r.Method == http.MethodPost)
		if !public && !s.auth.valid(r.Header.Get(sessionHeader)) {
			http.Error(w, refused, http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// newSession answers POST /api/session: {"session": …} for a login secret
// in the X-Zerg-Login header, 403 otherwise.
func (s *Server) newSession(w http.ResponseWriter, r *http.Request) {
	session := s.auth.login(r.Header.Get(loginHeader))
	if session == "" {
		http.Error(w, refused, http.StatusForbidden)
		return
	}
	writeJSON(w, map[string]string{"session": session})
}

// loopbackOnly refuses a request whose Host is not a loopback name: a page
// of another site whose name was rebound to 127.0.0.1 (DNS rebinding)
// gets nothing, not even the page.
func loopbackOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, err := net.SplitHostPort(r.Host)
		if err != nil {
			host = r.Host
		}
		ip := net.ParseIP(host)
		if host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			http.Error(w, "zerg dashboard: it answers to its loopback address only", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

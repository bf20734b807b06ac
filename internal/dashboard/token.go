package dashboard

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
)

// cookieName carries the token after the first request, so the page's own
// requests (assets, API, the event stream) need not repeat it in the URL.
const cookieName = "zerg_dashboard"

// NewToken is a random token for a dashboard's URL: 128 bits.
func NewToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// requireToken refuses (403) a request that carries neither the token in
// ?t= nor the cookie set from it. The comparison is constant-time, so the
// time of a refusal says nothing of how much of a guess was right.
func requireToken(token string, next http.Handler) http.Handler {
	want := []byte(token)
	ok := func(got string) bool { return got != "" && subtle.ConstantTimeCompare([]byte(got), want) == 1 }
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if q := r.URL.Query().Get("t"); ok(q) {
			http.SetCookie(w, &http.Cookie{Name: cookieName, Value: token, Path: "/", HttpOnly: true,
				SameSite: http.SameSiteStrictMode})
			next.ServeHTTP(w, r)
			return
		}
		if c, err := r.Cookie(cookieName); err == nil && ok(c.Value) {
			next.ServeHTTP(w, r)
			return
		}
		http.Error(w, "zerg dashboard: this page needs the token in the URL zerg dashboard printed (…?t=TOKEN)", http.StatusForbidden)
	})
}

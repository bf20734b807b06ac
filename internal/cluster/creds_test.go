package cluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCredsFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "agent.json")
	c := Creds{URL: "nats://127.0.0.1:4222", User: "a", Password: "pw"}
	if err := c.WriteCreds(p); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, err %v", fi.Mode(), err)
	}
	got, err := ReadCreds(p)
	if err != nil || got != c {
		t.Fatalf("ReadCreds = %+v, %v", got, err)
	}

	for _, tc := range []struct{ body, field string }{
		{`{"user":"a","password":"pw"}`, `"url"`},
		{`{"url":"http://x:1","user":"a","password":"pw"}`, `"url"`},
		{`{"url":"nats://x:1","password":"pw"}`, `"user"`},
		{`{"url":"nats://x:1","user":"a"}`, `"password"`},
		{`{"url":"tls://x:1","user":"a","password":"pw"}`, `"ca"`},
		{`{"url":"tls://x:1","user":"a","password":"pw","ca":"junk"}`, `"ca"`},
		{`{"url":"nats://x:1","user":"a","password":"pw","pasword":"typo"}`, `"pasword"`},
		{`{"url":`, `unexpected EOF`},
	} {
		bad := filepath.Join(dir, "bad.json")
		if err := os.WriteFile(bad, []byte(tc.body), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := ReadCreds(bad)
		if err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("ReadCreds(%s) = %v, want an error naming the file and %s", tc.body, err, tc.field)
		}
	}
	if _, err := ReadCreds(filepath.Join(dir, "missing.json")); err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("missing file: %v", err)
	}
}

package term

import (
	"io"
	"os"
	"testing"
)

// A write to a pipe whose reader has gone says it succeeded and so do the
// ones after it; other errors still show; the writer beneath is reachable.
func TestSurvivePipes(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	out, errw := SurvivePipes(w, w)
	if u, ok := errw.(interface{ Unwrap() io.Writer }); !ok || u.Unwrap() != w {
		t.Errorf("stderr does not unwrap to the pipe")
	}
	if n, err := out.Write([]byte("one\n")); n != 4 || err != nil {
		t.Fatalf("open pipe: %d %v", n, err)
	}
	r.Close()
	for i := 0; i < 2; i++ {
		if n, err := out.Write([]byte("two\n")); n != 4 || err != nil {
			t.Fatalf("closed pipe, write %d: %d %v; want it dropped without an error", i+1, n, err)
		}
	}
	f, err := os.CreateTemp(t.TempDir(), "x")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := (&pipeSafe{w: f}).Write([]byte("x")); err == nil {
		t.Error("a write to a closed file reported no error")
	}
}

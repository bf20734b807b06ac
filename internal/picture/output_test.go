package picture

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/spec"
)

func TestParseFormat(t *testing.T) {
	for _, c := range []struct {
		flag    string
		want    Format
		wantErr string
	}{
		{"", "", ""},
		{"text", "", ""},
		{"svg", FormatSVG, ""},
		{"png", FormatPNG, ""},
		{"dot", "", "--format dot: give one of text, svg or png"},
		{"jpg", "", "--format jpg: give one of text, svg or png"},
	} {
		f, err := ParseFormat(c.flag, "svg", "png")
		if f != c.want || (err == nil) != (c.wantErr == "") || err != nil && err.Error() != c.wantErr {
			t.Errorf("ParseFormat(%q) = %q, %v; want %q, %q", c.flag, f, err, c.want, c.wantErr)
		}
	}
}

func TestDrawGraphFormats(t *testing.T) {
	g := &spec.Graph{Feature: "auth", Tasks: []*spec.Task{{ID: "a", Title: "A"}}}
	for f, prefix := range map[Format]string{FormatDOT: "digraph", FormatSVG: "<svg", FormatPNG: "\x89PNG", "": "<svg"} {
		b, err := DrawGraph(g, f)
		if err != nil {
			t.Fatalf("%q: %v", f, err)
		}
		if !bytes.Contains(b[:min(len(b), 200)], []byte(prefix)) {
			t.Errorf("%q: begins %q, want %q", f, b[:min(len(b), 20)], prefix)
		}
	}
}

func TestOutput(t *testing.T) {
	var text, bin bytes.Buffer
	if err := Output("", FormatSVG, []byte("<svg/>"), &text, &bin, true); err != nil || text.String() != "<svg/>" || bin.Len() != 0 {
		t.Errorf("svg to a terminal: %v, text %q, binary %q", err, text.String(), bin.String())
	}
	text.Reset()
	if err := Output("", FormatPNG, []byte("png"), &text, &bin, true); !errors.Is(err, ErrBinaryToTerminal) || text.Len()+bin.Len() != 0 {
		t.Errorf("png to a terminal: %v, wrote %q %q", err, text.String(), bin.String())
	}
	if err := Output("", FormatPNG, []byte("png"), &text, &bin, false); err != nil || bin.String() != "png" || text.Len() != 0 {
		t.Errorf("png to a pipe: %v, text %q, binary %q", err, text.String(), bin.String())
	}
	p := filepath.Join(t.TempDir(), "g.png")
	if err := Output(p, FormatPNG, []byte("png"), nil, nil, true); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(p); err != nil || string(b) != "png" {
		t.Errorf("--output: %q, %v", b, err)
	}
	if err := Output(filepath.Join(p, "x"), FormatSVG, nil, nil, nil, false); err == nil || !strings.HasPrefix(err.Error(), "write ") {
		t.Errorf("--output under a file: %v, want write …", err)
	}
}

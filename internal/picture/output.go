package picture

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/zergrush/zerg/internal/fsx"
	"github.com/zergrush/zerg/internal/spec"
	"github.com/zergrush/zerg/internal/textx"
)

// ParseFormat checks a --format value against the formats a command draws.
// "" and "text" are the command's own table, returned as "": the picture
// package decides what it can draw, so every command refuses the same way.
func ParseFormat(flag string, allowed ...string) (Format, error) {
	if flag == "" || flag == "text" {
		return "", nil
	}
	if !slices.Contains(allowed, flag) {
		return "", fmt.Errorf("--format %s: give one of text, %s", flag, textx.JoinOr(allowed))
	}
	return Format(flag), nil
}

// DrawGraph draws a plan (no run: no statuses) in format f as the dashboard
// does; SVG for any format but DOT and PNG.
func DrawGraph(g *spec.Graph, f Format) ([]byte, error) {
	l := Place(FromGraph(g, nil))
	switch f {
	case FormatDOT:
		return DOT(g.Feature, l), nil
	case FormatPNG:
		return PNG(l)
	}
	return SVG(l), nil
}

// ErrBinaryToTerminal refuses a PNG for a terminal: it would only garble
// it. It is the user's to fix (redirect or --output).
var ErrBinaryToTerminal = errors.New("--format png writes binary data; redirect stdout to a file or pass --output FILE")

// Output writes a drawing b to path when given (atomically, so a doc's
// image is never half written), else to stdout: text formats to text (the
// writer that cleans what it prints), a PNG's bytes unchanged to binary,
// unless stdout is a terminal.
func Output(path string, f Format, b []byte, text, binary io.Writer, terminal bool) error {
	if path != "" {
		if err := fsx.WriteFileAtomic(path, b, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		return nil
	}
	if f != FormatPNG {
		_, err := text.Write(b)
		return err
	}
	if terminal {
		return ErrBinaryToTerminal
	}
	_, err := binary.Write(b)
	return err
}

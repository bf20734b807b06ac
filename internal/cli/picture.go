package cli

import (
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/zergrush/zerg/internal/fsx"
	"github.com/zergrush/zerg/internal/picture"
)

// pictureFormat checks a --format value against the formats a command
// draws (text is its table, the default).
func pictureFormat(flag string, allowed ...string) (picture.Format, error) {
	if flag == "" || flag == "text" {
		return "", nil
	}
	if !slices.Contains(allowed, flag) {
		return "", usageErrorf("--format %s: give one of text, %s", flag, joinOr(allowed))
	}
	return picture.Format(flag), nil
}

func joinOr(s []string) string {
	out := ""
	for i, x := range s {
		switch {
		case i == 0:
		case i == len(s)-1:
			out += " or "
		default:
			out += ", "
		}
		out += x
	}
	return out
}

// writePicture writes a drawing to --output (atomically, so a doc's image
// is never half written) or to stdout. A PNG is not written to a terminal:
// it would only garble it.
func (a *app) writePicture(output string, f picture.Format, b []byte) error {
	if output != "" {
		if err := fsx.WriteFileAtomic(output, b, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", output, err)
		}
		return nil
	}
	if f != picture.FormatPNG {
		_, err := a.stdout.Write(b)
		return err
	}
	if isTerminal(a.stdout) {
		return usageErrorf("--format png writes binary data; redirect stdout to a file or pass --output FILE")
	}
	// Binary data, never to a terminal: the bytes are the picture.
	_, err := uncleaned(a.stdout).Write(b)
	return err
}

// isTerminal reports whether w writes to a character device, through the
// app's wrappers.
func isTerminal(w io.Writer) bool {
	for {
		u, ok := w.(interface{ Unwrap() io.Writer })
		if !ok {
			break
		}
		w = u.Unwrap()
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

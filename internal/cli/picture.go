package cli

import (
	"errors"
	"io"
	"os"

	"github.com/zergrush/zerg/internal/picture"
)

// pictureFormat checks a --format value against the formats a command
// draws (picture.ParseFormat); a format it does not draw is bad input.
func pictureFormat(flag string, allowed ...string) (picture.Format, error) {
	f, err := picture.ParseFormat(flag, allowed...)
	return f, badInput(err)
}

// writePicture writes a drawing to --output or to stdout (picture.Output);
// a PNG refused for a terminal is bad input.
func (a *app) writePicture(output string, f picture.Format, b []byte) error {
	// Binary data goes beneath the cleaning: the bytes are the picture.
	err := picture.Output(output, f, b, a.stdout, uncleaned(a.stdout), isTerminal(a.stdout))
	if errors.Is(err, picture.ErrBinaryToTerminal) {
		return badInput(err)
	}
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

package cli

import "github.com/zergrush/zerg/internal/term"

// survivePipes keeps a coordinator going when the reader of its output goes
// away (zerg rush … | head): writes to a closed stdout or stderr are
// dropped instead of killing the process (term.SurvivePipes).
func (a *app) survivePipes() { a.stdout, a.stderr = term.SurvivePipes(a.stdout, a.stderr) }

package diagnose

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/zergrush/zerg/internal/textx"
)

// Finding is one thing an output reports, parsed: where (file, line), what
// kind, the message, and the test it belongs to.
type Finding struct {
	Language string `json:"language"`          // go, python, javascript, rust, shell, git, api
	Kind     string `json:"kind"`              // compile, type, undefined, import, syntax, test_failed, panic, timeout, race, lint, format, error
	File     string `json:"file,omitempty"`    // as the tool printed it
	Line     int    `json:"line,omitempty"`    // 0 when unknown
	Test     string `json:"test,omitempty"`    // the failing test's name
	Message  string `json:"message,omitempty"` // one line
}

// maxMessage bounds a finding's message, in bytes.
const maxMessage = 300

// maxFindings bounds the findings of one output.
const maxFindings = 50

// rule turns the lines a regexp matches into findings.
type rule struct {
	lang, kind string
	re         *regexp.Regexp
	// file, line, test, msg are submatch indexes (0: none).
	file, line, test, msg int
	// kindOf, when set, decides the kind from the message.
	kindOf func(msg string) string
}

func r(lang, kind, expr string, file, line, test, msg int) rule {
	return rule{lang: lang, kind: kind, re: regexp.MustCompile(expr), file: file, line: line, test: test, msg: msg}
}

var rules = []rule{
	// Go: compiler and vet lines, failing tests, panics, races, timeouts.
	{lang: "go", re: regexp.MustCompile(`(?m)^(?:vet: )?(?:\./)?([\w./-]+\.go):(\d+)(?::\d+)?: (.+)$`), file: 1, line: 2, msg: 3, kindOf: goKind},
	r("go", "test_failed", `(?m)^\s*--- FAIL: (\S+)(?: \([^)\n]*\))?(?:\n\s+([\w./-]+\.go):(\d+): (.*(?:\n\s{8,}.*){0,3}))?`, 2, 3, 1, 4),
	r("go", "panic", `(?m)^panic: (.+)$`, 0, 0, 0, 1),
	r("go", "race", `(?m)^WARNING: (DATA RACE)`, 0, 0, 0, 1),
	r("go", "timeout", `(?m)^panic: (test timed out after \S+)`, 0, 0, 0, 1),

	// Python: pytest's summary, mypy and flake8 lines, the last frame and
	// line of a traceback.
	r("python", "test_failed", `(?m)^FAILED ([\w./-]+\.py)::(\S+)(?: - (.+))?$`, 1, 0, 2, 3),
	{lang: "python", re: regexp.MustCompile(`(?m)^([\w./-]+\.py):(\d+): error: (.+)$`), file: 1, line: 2, msg: 3, kindOf: mypyKind},
	r("python", "lint", `(?m)^([\w./-]+\.py):(\d+):\d+: ([EFWC]\d{3} .+)$`, 1, 2, 0, 3),
	r("python", "frame", `(?m)^\s+File "([^"]+)", line (\d+)`, 1, 2, 0, 0),
	r("python", "location", `(?m)^([\w./-]+\.py):(\d+): [A-Z]\w*(?:Error|Exception)$`, 1, 2, 0, 0),
	{lang: "python", re: regexp.MustCompile(`(?m)^(?:E\s+)?((?:[A-Z]\w*Error|Exception|KeyboardInterrupt)(?::.*)?)$`), msg: 1, kindOf: pyExceptionKind},

	// JavaScript / TypeScript: tsc, Jest/Vitest headers, node --test, stack
	// frames, npm error codes, ESLint lines.
	{lang: "javascript", re: regexp.MustCompile(`(?m)^([\w./-]+\.[cm]?[jt]sx?)\((\d+),\d+\): error (TS\d+: .+)$`), file: 1, line: 2, msg: 3, kindOf: tsKind},
	{lang: "javascript", re: regexp.MustCompile(`(?m)^([\w./-]+\.[cm]?[jt]sx?):(\d+):\d+ - error (TS\d+: .+)$`), file: 1, line: 2, msg: 3, kindOf: tsKind},
	r("javascript", "test_failed", `(?m)^\s*● (.+ › .+|[^\n]+)$`, 0, 0, 1, 0),
	r("javascript", "test_failed", `(?m)^\s*(?:FAIL|×|✗)\s+(\S+\.(?:test|spec)\.[cm]?[jt]sx?)(?: > (.+))?`, 1, 0, 2, 0),
	r("javascript", "frame", `(?m)^\s+at .*?\(?((?:/|\./)?[\w./-]+\.[cm]?[jt]sx?):(\d+):\d+\)?$`, 1, 2, 0, 0),
	r("javascript", "npm", `(?m)^npm (?:ERR!|error) code (\S+)`, 0, 0, 0, 1),
	r("javascript", "lint", `(?m)^\s+(\d+):\d+\s+error\s+(.+)$`, 0, 1, 0, 2),
	{lang: "javascript", re: regexp.MustCompile(`(?m)^\s*((?:Reference|Type|Syntax|Range)Error: .+)$`), msg: 1, kindOf: jsExceptionKind},

	// Rust: rustc diagnostics with their location line, failing tests,
	// panics.
	{lang: "rust", re: regexp.MustCompile(`(?m)^error(\[E\d{4}\])?: (.+)\n\s+--> ([^:\n]+):(\d+):\d+`), file: 3, line: 4, msg: 2, kindOf: rustKind},
	r("rust", "test_failed", `(?m)^test (\S+) \.\.\. FAILED$`, 0, 0, 1, 0),
	r("rust", "test_failed", `(?m)^(\S+) --- FAILED$`, 0, 0, 1, 0), // cargo test -q
	{lang: "rust", re: regexp.MustCompile(`(?m)^thread '([^']+)'(?: \(\d+\))? panicked at ([^:\n]+):(\d+):\d+:\n(.+)$`), file: 2, line: 3, test: 1, msg: 4, kindOf: rustPanicKind},

	// Shell and git.
	r("shell", "command_not_found", `(?m)^(?:(\S+): (?:line )?(\d+): )?(\S+): (?:command )?not found$`, 1, 2, 0, 3),
	r("shell", "syntax", `(?m)^(\S+): (?:line )?(\d+): ((?i:syntax error).*)$`, 1, 2, 0, 3),
	r("git", "conflict", `(?m)^CONFLICT \([^)]+\): (?:Merge conflict in )?(.+)$`, 1, 0, 0, 0),
	r("git", "error", `(?m)^fatal: (.+)$`, 0, 0, 0, 1),
}

// Parse returns the findings of an output, in the order the tools printed
// them, at most 50.
func Parse(output string) []Finding {
	type at struct {
		pos int
		f   Finding
	}
	var found []at
	for _, ru := range rules {
		for _, m := range ru.re.FindAllStringSubmatchIndex(output, maxFindings) {
			g := func(i int) string {
				if i <= 0 || 2*i+1 >= len(m) || m[2*i] < 0 {
					return ""
				}
				return output[m[2*i]:m[2*i+1]]
			}
			f := Finding{Language: ru.lang, Kind: ru.kind, File: g(ru.file), Test: g(ru.test), Message: textx.Clip(textx.OneLine(g(ru.msg)), maxMessage)}
			if ru.line > 0 {
				f.Line, _ = strconv.Atoi(g(ru.line))
			}
			if ru.kindOf != nil {
				f.Kind = ru.kindOf(f.Message)
			}
			if f.Kind == "" {
				continue
			}
			found = append(found, at{m[0], f})
		}
	}
	for _, tf := range parseTAP(output) {
		found = append(found, at{tf.pos, tf.f})
	}
	// pytest names the failed test in the header of its section
	// ("____ test_x ____"): a Python finding below one is that test's.
	headers := pytestHeader.FindAllStringSubmatchIndex(output, -1)
	for i := range found {
		if f := &found[i].f; f.Language == "python" && f.Test == "" {
			for _, h := range headers {
				if h[0] < found[i].pos {
					f.Test = output[h[2]:h[3]]
				}
			}
		}
	}
	for i := range found {
		if f := &found[i].f; f.Language == "rust" && f.Kind == "assertion" && !strings.HasPrefix(f.Message, "assert") &&
			rustPanickedIn(output[found[i].pos:]) == rustOtherCode {
			// The test's own message would be raised in the test; the
			// stack says code the test called raised it: a crash.
			f.Kind = "panic"
		}
	}
	// An exception line reads the same in Python and JavaScript
	// ("TypeError: …"): it is the language the rest of the output shows.
	if py, js := pythonMarks.MatchString(output), jsMarks.MatchString(output); py != js {
		lang := "python"
		if js {
			lang = "javascript"
		}
		found = slices.DeleteFunc(found, func(a at) bool {
			return a.f.Language != lang && (a.f.Language == "python" || a.f.Language == "javascript") && a.f.File == "" && a.f.Test == ""
		})
	}
	// Stable by position: a tool's first complaint first.
	for i := 1; i < len(found); i++ {
		for j := i; j > 0 && found[j].pos < found[j-1].pos; j-- {
			found[j], found[j-1] = found[j-1], found[j]
		}
	}
	// Stack frames are where, not what: a Python exception takes the file
	// and line of the traceback's last frame before it, a JavaScript error
	// those of the first frame after it in the project (not Node's own,
	// not node_modules); the frames themselves are not findings.
	var out []Finding
	var lastPy *Finding
	jsWaiting := -1
	for _, a := range found {
		f := a.f
		switch {
		case f.Kind == "frame" && f.Language == "python":
			if !strings.HasPrefix(f.File, "<") && !strings.Contains(f.File, "/usr/lib/") && !strings.Contains(f.File, "site-packages") {
				lastPy = &a.f
			}
			continue
		case f.Kind == "location":
			// pytest's "file.py:12: AssertionError" after the E lines.
			for i := len(out) - 1; i >= 0; i-- {
				if out[i].Language == "python" && out[i].File == "" {
					out[i].File, out[i].Line = f.File, f.Line
					break
				}
			}
			continue
		case f.Kind == "frame":
			if jsWaiting >= 0 && !strings.Contains(f.File, "node_modules") && !strings.HasPrefix(f.File, "node:") {
				out[jsWaiting].File, out[jsWaiting].Line = f.File, f.Line
				jsWaiting = -1
			}
			continue
		case f.Language == "python" && f.File == "" && lastPy != nil:
			f.File, f.Line = lastPy.File, lastPy.Line
		}
		if len(out) == maxFindings {
			break
		}
		if f.Language == "rust" && f.File != "" && f.Test != "" {
			// cargo test lists a failed test before its panic: the list's
			// line takes the panic's place and message.
			for i := range out {
				if out[i].Language == "rust" && out[i].Kind == "test_failed" && out[i].Test == f.Test && out[i].File == "" {
					out[i].File, out[i].Line, out[i].Message = f.File, f.Line, f.Message
				}
			}
		}
		out = append(out, f)
		if f.Language == "javascript" && f.File == "" && f.Test == "" {
			jsWaiting = len(out) - 1
		}
	}
	return out
}

// pytestHeader is the header of a failed test's section in pytest's
// report: "_____ test_name _____" (or "___ TestClass.test_name ___").
var pytestHeader = regexp.MustCompile(`(?m)^_{3,} ([\w.\[\]-]+) _{3,}$`)

var (
	pythonMarks = regexp.MustCompile(`Traceback \(most recent call last\)|File "[^"]+\.py", line \d|(?m)^[\w./-]+\.py:\d+|(?m)^E\s+\w+`)
	jsMarks     = regexp.MustCompile(`(?m)^\s+at .*\.[cm]?[jt]sx?:\d+|node:internal|(?m)^npm (ERR!|error)|\.[cm]?[jt]sx?:\d+:\d+`)
)

func goKind(msg string) string {
	switch {
	case strings.Contains(msg, "undefined:") || strings.Contains(msg, " undefined (type"):
		return "undefined"
	case strings.Contains(msg, "syntax error") || strings.Contains(msg, "expected '") || strings.Contains(msg, "non-declaration statement") ||
		strings.Contains(msg, "on left side of :=") || strings.Contains(msg, "literal not terminated") || strings.Contains(msg, "illegal character"):
		return "syntax"
	case strings.Contains(msg, "cannot use") || strings.Contains(msg, "mismatched types") || strings.Contains(msg, "cannot convert"):
		return "type"
	case strings.Contains(msg, "no required module") || strings.Contains(msg, "is not in std") || strings.Contains(msg, "could not import"):
		return "import"
	case strings.Contains(msg, "declared and not used") || strings.Contains(msg, "imported and not used") || strings.Contains(msg, "missing return") ||
		strings.Contains(msg, "not in for") || strings.Contains(msg, "label ") || strings.Contains(msg, "redeclared") || strings.Contains(msg, "no new variables"):
		return "compile"
	}
	return "error"
}

func mypyKind(msg string) string {
	switch {
	case strings.Contains(msg, "is not defined") || strings.Contains(msg, "[name-defined]"):
		return "undefined"
	case strings.Contains(msg, "import") || strings.Contains(msg, "library stub"):
		return "import"
	}
	return "type"
}

func pyExceptionKind(msg string) string {
	switch {
	case strings.HasPrefix(msg, "AssertionError"):
		return "assertion"
	case strings.HasPrefix(msg, "NameError") || strings.HasPrefix(msg, "AttributeError"):
		return "undefined"
	case strings.HasPrefix(msg, "ModuleNotFoundError") || strings.HasPrefix(msg, "ImportError"):
		return "import"
	case strings.HasPrefix(msg, "SyntaxError") || strings.HasPrefix(msg, "IndentationError"):
		return "syntax"
	case strings.HasPrefix(msg, "TypeError"):
		return "exception"
	}
	return "exception"
}

func tsKind(msg string) string {
	code, _, _ := strings.Cut(msg, ":")
	switch code {
	case "TS2304", "TS2552", "TS2580", "TS2339", "TS2551", "TS2724", "TS2305":
		return "undefined"
	case "TS2307", "TS2614":
		return "import"
	case "TS1005", "TS1109", "TS1128", "TS1003", "TS1161", "TS1002", "TS1010":
		return "syntax"
	}
	return "type"
}

func jsExceptionKind(msg string) string {
	switch {
	case strings.HasPrefix(msg, "ReferenceError"):
		return "undefined"
	case strings.HasPrefix(msg, "SyntaxError"):
		return "syntax"
	}
	return "exception"
}

func rustKind(msg string) string {
	has := func(subs ...string) bool {
		for _, sub := range subs {
			if strings.Contains(msg, sub) {
				return true
			}
		}
		return false
	}
	switch {
	case has("unresolved import", "failed to resolve", "file not found for module", "unlinked crate", "can't find crate", "cannot find module or crate"):
		return "import"
	case has("mismatched types", "trait bound", "is not an iterator", "is not implemented", "cannot index", "expected type", "type annotations needed", "cannot add", "cannot multiply", "cannot subtract", "no implementation for"):
		return "type"
	case has("cannot find", "no method named", "no field", "no function or associated item", "not found in this scope"):
		return "undefined"
	case strings.HasPrefix(msg, "expected") || has("delimiter", "unterminated", "unknown start of token"):
		return "syntax"
	case has("unused", "missing documentation", "never used", "should have a", "this could be"):
		return "lint"
	case has("may not be used on the stable", "requires rustc", "rust-version"):
		return "version"
	}
	return "compile"
}

// rustPanicKind: a failed assert! is a panic too, but an assertion: its
// message starts "assertion", or is the one the test wrote (assert!(ok,
// "…"), panic!("…") in a test). A crash is what the runtime says: an
// unwrap of None or Err, an index out of bounds, an overflow, a borrow of
// a borrowed RefCell, unreachable or unimplemented code.
func rustPanicKind(msg string) string {
	if strings.HasPrefix(msg, "assert") || !rustCrash.MatchString(msg) {
		return "assertion"
	}
	return "panic"
}

// Where a Rust panic was raised, from the backtrace printed after it
// (RUST_BACKTRACE=1): in the test function itself, in other code, or not
// known (no backtrace).
const (
	rustUnknown = iota
	rustInTest
	rustOtherCode
)

var (
	rustFrame     = regexp.MustCompile(`(?m)^\s+\d+: (\S+)`)
	rustNextPanic = regexp.MustCompile(`(?m)^(?:---- |thread '|failures:)`)
)

// rustPanickedIn reads the backtrace of the panic at the start of out: the
// first frame that is not the standard library's is the code that
// panicked; a test's frame is named …::tests::name or is its closure.
func rustPanickedIn(out string) int {
	head, rest, ok := strings.Cut(out, "\n")
	if !ok || !strings.HasPrefix(head, "thread '") {
		return rustUnknown
	}
	test, _, _ := strings.Cut(strings.TrimPrefix(head, "thread '"), "'")
	if loc := rustNextPanic.FindStringIndex(rest); loc != nil {
		rest = rest[:loc[0]]
	}
	if !strings.Contains(rest, "stack backtrace:") {
		return rustUnknown
	}
	for _, m := range rustFrame.FindAllStringSubmatch(rest, -1) {
		name := m[1]
		if strings.HasPrefix(name, "__rustc::") || strings.HasPrefix(name, "core::") || strings.HasPrefix(name, "std::") ||
			strings.HasPrefix(name, "alloc::") || strings.HasPrefix(name, "<") {
			continue
		}
		name = strings.TrimSuffix(name, "::{{closure}}")
		if name == test || strings.HasSuffix(name, "::"+test) {
			return rustInTest
		}
		return rustOtherCode
	}
	return rustUnknown
}

var rustCrash = regexp.MustCompile("^called `(?:Option|Result)::(?:unwrap|expect|unwrap_err)\\(\\)`|index out of bounds|out of range for slice|slice index starts|byte index \\d+ is (?:out of bounds|not a char boundary)|^attempt to (?:add|subtract|multiply|divide|negate|shift|calculate the remainder)|^already (?:mutably )?borrowed|BorrowMutError|BorrowError|^not (?:yet )?implemented|^internal error: entered unreachable code|^explicit panic|^capacity overflow|^misaligned pointer|^unsafe precondition|: (?:Err|Os|Custom|ParseIntError|ParseFloatError|Utf8Error|Error)\\b|\\{ kind: ")

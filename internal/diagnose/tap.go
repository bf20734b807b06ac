package diagnose

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/zergrush/zerg/internal/textx"
)

// node --test prints TAP when its output is not a terminal (zerg's
// verification, a gate, a log): each test is an "ok"/"not ok" line,
// indented by its depth, followed by a YAML block between "---" and "..."
// that holds what failed: location, error, name, expected, actual. A
// suite (describe) is a "not ok" too, whose block only says that its
// subtests failed: it is not a finding, its failed tests are.

var (
	tapNotOK = regexp.MustCompile(`^(\s*)not ok \d+ - (.+?)(?: # .*)?$`)
	tapOK    = regexp.MustCompile(`^(\s*)ok \d+ - `)
	// tapSubtest names the suite a test is in: "# Subtest: CLI".
	tapSubtest = regexp.MustCompile(`^(\s*)# Subtest: (.+)$`)
	tapKey     = regexp.MustCompile(`^(\s*)(\w+):(?: (.*))?$`)
	tapLoc     = regexp.MustCompile(`^(.+?):(\d+)(?::\d+)?$`)
)

type tapFinding struct {
	pos int
	f   Finding
}

// parseTAP returns a finding for each failed test of a TAP output (none
// for an output that is not TAP).
func parseTAP(output string) []tapFinding {
	if !strings.Contains(output, "not ok ") {
		return nil
	}
	var out []tapFinding
	lines := strings.SplitAfter(output, "\n")
	// suites[depth] is the suite open at that indentation.
	suites := map[int]string{}
	pos := 0
	for i := 0; i < len(lines); i++ {
		line := strings.TrimRight(lines[i], "\r\n")
		start := pos
		pos += len(lines[i])
		if m := tapSubtest.FindStringSubmatch(line); m != nil {
			suites[len(m[1])] = m[2]
			continue
		}
		if tapOK.MatchString(line) {
			continue
		}
		m := tapNotOK.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		depth, name := len(m[1]), strings.TrimSpace(m[2])
		block, n := tapBlock(lines[i+1:], depth)
		for _, l := range lines[i+1 : i+1+n] {
			pos += len(l)
		}
		i += n
		if block["type"] == "suite" || block["failureType"] == "subtestsFailed" {
			continue
		}
		// The test's name with the suites it is in: "CLI › prints an id".
		var path []string
		for d := 0; d < depth; d += 4 {
			if s, ok := suites[d]; ok && s != name {
				path = append(path, s)
			}
		}
		f := Finding{Language: "javascript", Kind: tapKind(block), Test: strings.Join(append(path, name), " › ")}
		if lm := tapLoc.FindStringSubmatch(block["location"]); lm != nil {
			f.File = lm[1]
			f.Line, _ = strconv.Atoi(lm[2])
		}
		msg := block["error"]
		var values []string
		for _, k := range []string{"expected", "actual"} {
			if v := block[k]; v != "" {
				values = append(values, k+" "+v)
			}
		}
		if len(values) > 0 {
			msg += " (" + strings.Join(values, ", ") + ")"
		}
		f.Message = textx.Clip(textx.OneLine(msg), maxMessage)
		out = append(out, tapFinding{start, f})
	}
	return out
}

// tapKind is the kind of a failed test from its block: an assertion, a
// timeout, or the error it threw.
func tapKind(block map[string]string) string {
	switch name := block["name"]; {
	case block["failureType"] == "testTimeoutFailure":
		return "timeout"
	case name == "AssertionError" || block["code"] == "ERR_ASSERTION":
		return "assertion"
	case name != "" && name != "Error":
		return jsExceptionKind(name + ": ")
	}
	return "test_failed"
}

// tapBlock reads the YAML block after a test line at depth (its lines are
// indented two more): its top-level keys, a |- value's lines joined, quotes
// removed. n is how many lines it took.
func tapBlock(lines []string, depth int) (map[string]string, int) {
	block := map[string]string{}
	if len(lines) == 0 || strings.TrimSpace(lines[0]) != "---" {
		return block, 0
	}
	indent := depth + 2
	key := ""
	var multi []string
	flush := func() {
		if key != "" && multi != nil {
			block[key] = strings.Join(multi, " ")
		}
		multi = nil
	}
	n := 1
	for ; n < len(lines); n++ {
		line := strings.TrimRight(lines[n], "\r\n")
		if strings.TrimSpace(line) == "..." {
			n++
			break
		}
		if m := tapKey.FindStringSubmatch(line); m != nil && len(m[1]) == indent {
			flush()
			key = m[2]
			v := strings.TrimSpace(m[3])
			if v == "|-" || v == "|" || v == ">-" {
				multi = []string{}
				continue
			}
			block[key] = yamlScalar(v)
			continue
		}
		if multi != nil && strings.TrimSpace(line) != "" {
			multi = append(multi, strings.TrimSpace(line))
		}
	}
	flush()
	return block, n
}

// yamlScalar is a one-line YAML value without its quotes ('it”s' is
// it's; "a \"b\"" is a "b").
func yamlScalar(v string) string {
	switch {
	case len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'':
		return strings.ReplaceAll(v[1:len(v)-1], "''", "'")
	case len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"':
		if u, err := strconv.Unquote(v); err == nil {
			return u
		}
		return v[1 : len(v)-1]
	}
	return v
}

package diagnose

import (
	"regexp"
	"slices"
	"strings"
	"sync"
)

// A feature is a fact about an output that the classifier weighs: a
// signal (a phrase a tool prints), the program the command ran, a range of
// exit codes, a kind of finding. Features say nothing about patterns by
// themselves; which features go with which pattern, and how strongly, is
// what the model learns from the corpus.

// signal is a feature found by a regular expression in the output.
type signal struct {
	name string
	re   *regexp.Regexp
}

func sig(name, expr string) signal { return signal{name, regexp.MustCompile(expr)} }

// signals are the phrases tools print, grouped by what printed them.
// They are compiled on first use, not when zerg starts: every zerg
// process (a hook for each tool call, each sandbox's init) would pay for
// them.
var signals = sync.OnceValue(func() []signal {
	return []signal{
		// Go
		sig("go.undefined", `(?m)\bundefined: \S+| undefined \(type .* has no field or method`),
		sig("go.not_used", `declared and not used|imported and not used|"[^"]+" imported and not used`),
		sig("go.missing_return", `missing return`),
		sig("go.cannot_use", `cannot use .* as .* (value|type)|\(mismatched types|cannot convert|invalid operation: .*mismatched`),
		sig("go.too_many_args", `too many (arguments|return values)|not enough (arguments|return values)|assignment mismatch`),
		sig("go.syntax", `(?m)syntax error: |non-name .* on left side of :=|expected '[^']+', found|non-declaration statement outside function body|illegal character|unexpected newline|string literal not terminated`),
		sig("go.no_required_module", `no required module provides package`),
		sig("go.missing_gosum", `missing go\.sum entry`),
		sig("go.not_in_std", `is not in std|package \S+ is not in (GOROOT|std)`),
		sig("go.no_go_files", `no Go files in|cannot find package`),
		sig("go.module_lookup_disabled", `module lookup disabled by GOPROXY=off|GOFLAGS=-mod=mod|disabled by -mod=vendor|GOPROXY=off`),
		sig("go.requires_go", `(?m)requires go >= ?\d|go: go\.mod requires go|toolchain not available|go: downloading go\d|switching to go\d`),
		sig("go.fail_line", `(?m)^--- FAIL: `),
		sig("go.pass_line", `(?m)^--- PASS: `),
		sig("go.test_errorf", `(?m)^\s+\S+_test\.go:\d+: `),
		sig("gen.got_want", `Not equal:|Error Trace:|(?i)\b(got|want|expected|actual)\b.*\b(got|want|expected|actual|but)\b`),
		sig("go.panic", `(?m)^panic: |\[recovered\]|goroutine \d+ \[running\]`),
		sig("go.nil_deref", `invalid memory address or nil pointer dereference|index out of range|slice bounds out of range`),
		sig("go.timeout", `panic: test timed out after`),
		sig("go.race", `WARNING: DATA RACE|race detected during execution of test`),
		sig("go.vet", `(?m)^# \S+\n(\S+\.go:\d+:\d+: .*\n)+|go vet|\bvet:`),
		sig("go.vet_printf", `result of .* call not used|suspect (or|and)|from a non-test goroutine|passes lock by value|reads arg #|format %\S+ has arg|wrong type for printf|call has arguments but no formatting directives|possible misuse of|unreachable code|self-assignment|copies lock value|struct field tag|should have signature|Errorf format|unkeyed fields|lostcancel`),
		sig("go.no_test_files", `\[no test files\]`),
		sig("go.no_tests_to_run", `testing: warning: no tests to run`),
		sig("go.build_failed", `\[build failed\]|\[setup failed\]`),
		sig("go.out_of_memory", `runtime: out of memory|fatal error: out of memory|cannot allocate memory`),
		sig("go.dial", `dial tcp|lookup \S+ on|proxy\.golang\.org|sum\.golang\.org`),

		// Python
		sig("py.traceback", `Traceback \(most recent call last\)`),
		sig("py.module_not_found", `ModuleNotFoundError: No module named|ImportError: cannot import name|ImportError: No module named`),
		sig("py.relative_import", `attempted relative import|No module named '[a-z_]+\.[a-z_.]+'`),
		sig("py.name_error", `NameError: name '[^']+' is not defined`),
		sig("py.attribute_error", `AttributeError: `),
		sig("py.type_error", `TypeError: .*(takes \d+ positional|missing \d+ required|unsupported operand|object is not (callable|subscriptable|iterable)|unexpected keyword argument)`),
		sig("py.value_error", `ValueError: |KeyError: |IndexError: |ZeroDivisionError|RuntimeError: |RecursionError|UnboundLocalError`),
		sig("py.syntax", `IndentationError: |TabError: |invalid syntax|unexpected indent|unindent does not match|SyntaxError: (invalid|unterminated|unmatched|expected|EOL)|\^\^\^`),
		sig("py.assertion", `(?m)^E\s+(assert |AssertionError)|^\s*assert .* == |AssertionError: assert `),
		sig("py.pytest_failed", `(?m)^FAILED \S+::|=+ \d+ failed|short test summary info`),
		sig("py.pytest_error", `(?m)^ERROR |\d+ errors? in|ERROR collecting|errors during collection`),
		sig("py.pytest_no_tests", `Ran 0 tests|NO TESTS RAN|no tests ran|collected 0 items`),
		sig("py.mypy", `(?m): error: .*\[[a-z-]+\]$|Found \d+ errors? in \d+ files?|mypy`),
		sig("py.mypy_types", `Incompatible (types|return value type)|Argument \d+ to .* has incompatible type|has no attribute|Unsupported operand types|"[^"]+" has incompatible type|\[(assignment|arg-type|return-value|operator|index|call-arg|union-attr)\]`),
		sig("py.mypy_name", `Name "[^"]+" is not defined|\[name-defined\]|Module "[^"]+" has no attribute|\[attr-defined\]`),
		sig("py.mypy_import", `Cannot find implementation or library stub|\[import-not-found\]|\[import\]|Library stubs not installed|\[import-untyped\]`),
		sig("py.flake8", `(?m):\d+:\d+: [EFWC]\d{3} |(?m)^\S+\.py:\d+:\d+: |pyflakes|flake8|imported but unused|redefinition of unused|undefined name`),
		sig("py.black", `would reformat|would be reformatted|Oh no! 💥|files? would be left unchanged`),
		sig("py.memory", `MemoryError`),
		sig("py.requires_python", `requires a different Python|Python \d\.\d+ or newer|requires-python|python_requires|unsupported Python version|f-string: .*3\.\d+|SyntaxError: .*match`),
		sig("py.keyerror_environ", `KeyError: '[A-Z][A-Z0-9_]+'|os\.environ\[|environ\.get|getenv`),
		sig("py.pip_network", `Failed to establish a new connection|Could not fetch URL|Max retries exceeded with url|NewConnectionError|Temporary failure in name resolution|pypi\.org`),
		sig("py.pip_no_index", `--no-index|No matching distribution found|Could not find a version that satisfies`),

		// JavaScript / TypeScript / npm
		sig("js.ts_error", `(?m)error TS\d+:`),
		sig("js.ts_type", `TS2322|TS2345|TS2741|TS2769|TS2367|TS2352|TS2532|TS18048|TS2551|is not assignable to|has no properties in common|Argument of type`),
		sig("js.ts_name", `TS2304|TS2552|TS2724|TS2305|TS2339|TS2551|Cannot find name|has no exported member|does not exist on type`),
		sig("js.ts_module", `TS2307|Cannot find module '[^']+' or its corresponding type declarations`),
		sig("js.ts_syntax", `TS1005|TS1109|TS1128|TS1003|TS1161|TS1002|TS1010|' expected\.|Expression expected|Declaration or statement expected|Unterminated`),
		sig("js.cannot_find_module", `Cannot find module|ERR_MODULE_NOT_FOUND|Cannot find package|MODULE_NOT_FOUND|Failed to resolve import|Failed to load url|Could not resolve "|Module not found`),
		sig("js.relative_module", `Cannot find module '\.\.?/|Cannot find module "\.\.?/|Failed to resolve import "\.\.?/|imported from .*\.m?[jt]s|Cannot find module '/`),
		sig("js.reference_error", `ReferenceError`),
		sig("js.not_a_function", `is not a function|is not a constructor|Cannot read properties of (undefined|null)`),
		sig("js.type_error", `TypeError: `),
		sig("js.syntax_error", `Parsing error:|EJSONPARSE|JSONParseError|invalid JS syntax|Failed to parse source|Unexpected token|Unexpected end of input|Unexpected identifier|missing \) after|Invalid or unexpected token|Unterminated string`),
		sig("js.jest", `Tests?:\s+\d+ failed|● |jest|Test Suites:`),
		sig("js.vitest", `vitest|FAIL\s+\S+\.(test|spec)\.|Test Files\s+\d+ failed|AssertionError: expected`),
		sig("js.node_test", `(?m)^not ok \d+|# fail [1-9]|node:test|ERR_TEST_FAILURE`),
		sig("js.expect", `Expected:|Received:|expect\(|toBe|toEqual|deepStrictEqual|strictEqual|assert\.|expected .* to (be|equal|deep)`),
		sig("gen.timeout", `Exceeded timeout of \d+ ?ms|Test timed out in \d+ms|timed out after|test timed out`),
		sig("js.eslint", `(?:^|[^,{\w])eslint|(?m)^\s+\d+:\d+\s+(error|warning)\s+|✖ \d+ problems?|no-unused-vars|no-undef\b|prefer-const|eqeqeq|semi\b`),
		sig("js.prettier", `(?:^|[^,{\w])prettier|Code style issues found|\[warn\] .*\.(js|ts|json|md)|Forgot to run Prettier`),
		sig("js.heap", `JavaScript heap out of memory|Reached heap limit|FATAL ERROR: .*Allocation failed`),
		sig("js.npm_error", `(?m)^npm (ERR!|error) `),
		sig("js.enotcached", `ENOTCACHED|only-if-cached|request to \S+ failed, reason: cache mode`),
		sig("js.enotfound", `ENOTFOUND|EAI_AGAIN|getaddrinfo|ECONNREFUSED|ETIMEDOUT|ECONNRESET|network request to .* failed|registry\.npmjs\.org`),
		sig("js.etarget", `ETARGET|No matching version found|E404|404 Not Found - GET|is not in this registry|notarget`),
		sig("js.engine", `EBADENGINE|Unsupported engine|engine "node" is incompatible|The engine "node"|requires node|Node\.js v?\d+ .*(required|or (higher|later|newer))|engines`),
		sig("js.unmet_dependency", `UNMET DEPENDENCY|(?m)^npm (?:ERR!|error) missing: |ELSPROBLEMS`),
		sig("js.no_tests", `No tests found|No test files found|# tests 0|No test suite found`),
		sig("gen.ansi", `(?i)\\u001b\[|\\x1b\[|\\e\[|\x1b\[\d+m|\[3\dm|\[39m|\[22m|\[1m`),

		// Rust
		sig("rs.error_code", `error\[E\d{4}\]`),
		sig("rs.type", `E0308|E0608|E0271|E0282|is not an iterator|the trait .* is not implemented|cannot index into|mismatched types|expected `+"`"+`[^`+"`"+`]+`+"`"+`, found|E0277|trait bound .* is not satisfied|E0599|E0369|E0614|cannot be applied to type`),
		sig("rs.unresolved", `E0425|cannot find (value|function|macro|type|struct|trait) `+"`"+`|E0412|E0433: failed to resolve|E0422|E0423`),
		sig("rs.unresolved_import", `E0432|unresolved import|E0583|file not found for module|could not find .* in (the crate root|`+"`"+`)|E0463`),
		sig("rs.borrow", `E0382|E0499|E0502|E0505|E0506|E0596|E0597|E0716|borrow of moved value|cannot borrow|does not live long enough|use of moved value|E0384|cannot assign twice|E0603|E0061|E0063|E0560|E0107|E0004|non-exhaustive patterns|E0106|missing lifetime specifier|E0053|E0046|not all trait items`),
		sig("rs.syntax", `(?m)^error: expected |expected one of|this file contains an unclosed delimiter|unexpected closing delimiter|mismatched closing delimiter|unterminated (double quote )?string|unknown start of token|expected item`),
		sig("rs.test_failed", `test result: FAILED|(?m)^test \S+ \.\.\. FAILED|failures:`),
		sig("rs.assert", `assertion .*failed|assertion `+"`"+`left == right`+"`"+` failed|left: |right: |assert!`),
		sig("rs.panic", `panicked at|called `+"`"+`Option::unwrap\(\)`+"`"+` on a `+"`"+`None`+"`"+`|called `+"`"+`Result::unwrap\(\)`+"`"+`|attempt to (divide|subtract|add|multiply) .*overflow|index out of bounds`),
		sig("rs.cargo_offline", `--offline|offline mode|attempting to make an HTTP request, but --offline|no matching package named|failed to select a version|unable to update registry|failed to get .* as a dependency|unable to get packages from source|couldn't find crate|can't find crate`),
		sig("rs.cargo_network", `failed to download|Couldn't resolve host|index\.crates\.io|crates\.io|spurious network error|failed to fetch`),
		sig("rs.rust_version", `E0554|may not be used on the stable release channel|rust-version|requires rustc \d|is not supported by the current toolchain|package .* cannot be built because it requires rustc|this version of Cargo is older than`),
		sig("rs.fmt", `(?m)^Diff in |rustfmt|cargo fmt`),
		sig("rs.clippy", `implied by .-D|-D warnings|#!?\[deny\(|missing documentation for|clippy::|warning: .*\n.*= help: for further information visit https://rust-lang\.github\.io/rust-clippy|#\[deny\(clippy`),
		sig("rs.running_zero", `running 0 tests`),
		sig("rs.env", `NotPresent|VarError|environment variable .* not defined|env!\(|NotPresent|std::env::var`),
		sig("rs.memory", `memory allocation of \d+ bytes failed`),

		// Shell, system and git
		sig("sh.command_not_found", `no such command: |command not found|: not found|No such file or directory.*\b(exec|sh|bash)\b|exec: .*: not found|executable file not found in \$PATH|spawn \S+ ENOENT|cannot execute|is not recognized`),
		sig("sh.permission", `Permission denied|EACCES|Operation not permitted|EPERM|permission denied|Read-only file system|EROFS`),
		sig("sh.nospace", `No space left on device|ENOSPC|Disk quota exceeded|EDQUOT|no space left`),
		sig("sh.killed", `(?m)(^|\s)Killed(\s|$)|Out of memory|OOM|signal: killed|SIGKILL|exit status 137|oom-kill`),
		sig("sh.syntax", `syntax error near unexpected token|syntax error: |unexpected EOF while looking for|Syntax error: |unterminated quoted string|bad substitution`),
		sig("sh.env_read", `process\.env\.|os\.environ|getenv|env::var|os\.Getenv|LookupEnv`),
		sig("sh.env_named", `\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b.{0,40}\b(is not set|must be set|not set|is required|is missing|not defined|is unset|is empty)|(missing|required|unset) (environment )?variable:? \$?[A-Z][A-Z0-9_]+`),
		sig("sh.unbound", ` Missing required environment|unbound variable|parameter null or not set|parameter not set|is not set|must be set|not set\b|missing required environment|environment variable|is required but`),
		sig("sh.timeout", `\(zerg: timed out after|timed out|Timeout|deadline exceeded`),
		sig("sh.tty", `not a tty|inappropriate ioctl for device|stdin is not a terminal|TERM environment variable not set|TERM=dumb|terminal|isatty|NO_COLOR|FORCE_COLOR|color`),
		sig("sys.dns", `Could not resolve host|Temporary failure in name resolution|Name or service not known|no such host|getaddrinfo|server misbehaving|Network is unreachable|Connection timed out|Failed to connect|unable to access 'https?://`),
		sig("sys.conn_refused", `Connection refused|connect: connection refused|ECONNREFUSED|connection refused`),
		sig("git.conflict", `CONFLICT \(|Automatic merge failed|Merge conflict in|fix conflicts and then commit|unmerged files|needs merge`),
		sig("git.fatal", `(?m)^fatal: `),
		sig("git.auth", `Authentication failed|could not read Username|terminal prompts disabled|Permission denied \(publickey\)|invalid username or password|403 Forbidden`),
		sig("git.remote", `Could not read from remote repository|does not appear to be a git repository|unable to access|repository .* not found`),

		// The model API and the Claude Code CLI
		sig("api.429", `\b429\b|rate_limit_error|Rate limited|rate limit|Too Many Requests|usage limit`),
		sig("api.401", `\b401\b|authentication_error|invalid x-api-key|Invalid API key|Not logged in|Please run /login|OAuth token|authentication failed`),
		sig("api.unreachable", `API Error: Connection error|Unable to connect to API|upstream request failed|check your inference gateway|connection refused|ECONNREFUSED|fetch failed|Connection error`),
		sig("api.prompt_too_long", `prompt is too long|context_too_long|context window|maximum context length|exceed context limit|input length and .* exceed`),
		sig("api.max_turns", `error_max_turns|Reached max(imum)? (number of )?turns|max_turns|--max-turns`),
		sig("api.result_json", `"type":"result"|"subtype":`),
		sig("api.is_error", `"is_error":true`),
		sig("api.no_result", `exited without a result|without a result|no result|signal: (killed|segmentation fault|aborted)|core dumped|SIGSEGV|Segmentation fault|exit status 1\b.*claude`),
		sig("api.api_error", `API Error: \d{3}|api_error_status`),

		// zerg's own verdicts
		sig("zerg.changed_nothing", `changed nothing|changed: nothing|the worker did not change|empty_change|nothing to commit|no changes added to commit`),
		sig("zerg.missing_created", `which the task creates, does not exist|which the task modifies, is unchanged|missing_file|unchanged_file`),
		sig("zerg.not_own", `which task \S+ does not own|does not own|ownership|not in the paths this task may write|outside the task's files`),
		sig("zerg.protected", `which no worker may change|is protected|protected_paths|forbidden_change|protected: `),
		sig("zerg.secret", `a secret was written|secret_found|never put credentials|holds a known secret|sk-ant-|\(secret: |zerg-anthropic-key|gitleaks|generic-api-key`),
		sig("zerg.cannot_fail", `a check that cannot fail|can never fail|passes on the base already|check_cannot_fail|passes already`),
		sig("zerg.timed_out", `\(zerg: timed out after`),

		// General
		sig("gen.error_word", `(?i)\berror\b`),
		sig("gen.warning_word", `(?i)\bwarning\b`),
		sig("gen.want", `(?i)\b(want(ed)?|expected|expecting|should (be|equal|have))\b`),
		sig("gen.diff_lines", `(?m)^[-+][^-+].*\n[-+][^-+]`),
		sig("gen.rerun", `(?i)RERUN|retry \d|\(retry|passed on retry`),
		sig("gen.version_word", `(?i)\b(version|requires?|newer|older|upgrade|minimum)\b`),
		sig("gen.memory_word", `(?i)\bmemory\b|\ballocat`),
		sig("gen.empty", `^\s*$`),
	}
})

// expected are, for each pattern, the features that its outputs show by
// definition (a race report for race_detected, "No space left on device"
// for disk_full): a prior on their likelihoods, P(feature | pattern) ~
// Beta(2, 0.25) instead of Beta(α, α), which the corpus's counts then
// update. It is what a person knows before the corpus: it matters for the
// patterns with few samples, and is outweighed where there are many.
var expected = map[string][]string{
	CompileError:            {"finding.compile", "sig.go.not_used", "sig.go.missing_return"},
	TypeError:               {"finding.type", "sig.go.cannot_use", "sig.js.ts_type", "sig.py.mypy_types", "sig.rs.type"},
	UndefinedSymbol:         {"finding.undefined", "sig.go.undefined", "sig.py.name_error", "sig.js.reference_error", "sig.js.ts_name", "sig.rs.unresolved"},
	ImportMissing:           {"mod.missing", "mod.own", "mod.relative", "mod.near_std"},
	DependencyMissing:       {"mod.missing", "mod.other"},
	SyntaxError:             {"finding.syntax", "sig.go.syntax", "sig.py.syntax", "sig.js.syntax_error", "sig.js.ts_syntax", "sig.rs.syntax", "sig.sh.syntax"},
	TestAssertion:           {"finding.test_failed", "sig.gen.want", "sig.gen.got_want", "sig.py.assertion", "sig.js.expect"},
	TestPanic:               {"finding.panic", "sig.go.panic", "sig.rs.panic", "sig.js.not_a_function"},
	TestTimeout:             {"sig.go.timeout", "sig.gen.timeout", "sig.sh.timeout"},
	RaceDetected:            {"sig.go.race"},
	LintFailure:             {"finding.lint", "sig.go.vet_printf", "sig.py.flake8", "sig.js.eslint", "sig.rs.clippy"},
	FormatFailure:           {"sig.py.black", "sig.js.prettier", "sig.rs.fmt"},
	NetworkUnavailable:      {"sig.sys.dns", "sig.js.enotfound", "sig.py.pip_network", "sig.go.dial", "sig.rs.cargo_network"},
	OfflineCacheMiss:        {"sig.go.module_lookup_disabled", "sig.js.enotcached", "sig.rs.cargo_offline", "sig.py.pip_no_index"},
	PermissionDenied:        {"sig.sh.permission"},
	DiskFull:                {"sig.sh.nospace"},
	OutOfMemory:             {"sig.sh.killed", "sig.go.out_of_memory", "sig.py.memory", "sig.js.heap", "sig.rs.memory"},
	CommandNotFound:         {"sig.sh.command_not_found", "mod.runner"},
	ToolchainVersion:        {"sig.go.requires_go", "sig.py.requires_python", "sig.js.engine", "sig.rs.rust_version"},
	EnvVarMissing:           {"sig.sh.env_named", "sig.sh.unbound", "sig.sh.env_read", "sig.py.keyerror_environ", "sig.rs.env"},
	TerminalDependentOutput: {"sig.sh.tty", "sig.gen.ansi"},
	FlakyTest:               {"test.passed_and_failed"},
	NoTestsRan:              {"sig.go.no_tests_to_run", "sig.py.pytest_no_tests", "sig.js.no_tests", "sig.rs.running_zero"},
	CheckCannotFail:         {"sig.zerg.cannot_fail"},
	EmptyChange:             {"sig.zerg.changed_nothing", "sig.zerg.missing_created"},
	OwnershipViolation:      {"sig.zerg.not_own"},
	ProtectedPath:           {"sig.zerg.protected"},
	SecretFound:             {"sig.zerg.secret"},
	MergeConflict:           {"sig.git.conflict"},
	RateLimited:             {"sig.api.429"},
	APIUnreachable:          {"sig.api.unreachable"},
	AuthFailed:              {"sig.api.401"},
	MaxTurns:                {"sig.api.max_turns"},
	ContextExhausted:        {"sig.api.prompt_too_long"},
	WorkerCrash:             {"sig.api.no_result"},
}

// programs are the programs a command runs (commandPrograms), as
// features "cmd.<name>".
var programs = []string{"go", "gofmt", "python", "python3", "pytest", "mypy", "flake8", "pyflakes", "black", "ruff",
	"node", "npm", "npx", "jest", "vitest", "tsc", "eslint", "prettier", "cargo", "rustc", "rustfmt", "clippy",
	"sh", "bash", "make", "git", "curl", "claude", "zerg", "shellcheck", "test", "timeout", "pip", "uv"}

// Features returns the features of an output: sorted, each at most once.
func Features(in Input, findings []Finding) []string {
	set := map[string]bool{}
	out := in.Output
	for _, s := range signals() {
		if s.re.MatchString(out) {
			set["sig."+s.name] = true
		}
	}
	runs := commandPrograms(in.Command)
	for _, p := range runs {
		if slices.Contains(programs, p) {
			set["cmd."+p] = true
		}
	}
	for _, w := range strings.Fields(in.Command) {
		for _, sub := range []string{"test", "vet", "build", "run", "fmt", "clippy", "check", "install", "ci", "merge", "rush"} {
			if w == sub {
				set["arg."+sub] = true
			}
		}
		if strings.HasPrefix(w, "-race") {
			set["arg.race"] = true
		}
		if w == "--offline" || strings.Contains(w, "GOPROXY=off") || w == "--no-index" {
			set["arg.offline"] = true
		}
	}
	switch e := in.Exit; {
	case e < 0:
	case e == 0:
		set["exit.0"] = true
	case e == 1:
		set["exit.1"] = true
	case e == 2:
		set["exit.2"] = true
	case e == 124:
		set["exit.124"] = true
	case e == 126 || e == 127:
		set["exit.127"] = true
	case e == 137 || e == 9 || e == -9:
		set["exit.137"] = true
	case e > 128:
		set["exit.signal"] = true
	default:
		set["exit.other"] = true
	}
	for _, f := range findings {
		set["finding."+f.Kind] = true
	}
	moduleFeatures(out, in.Own, runs, set)
	for _, m := range exception.FindAllStringSubmatch(out, 20) {
		name := m[1] + m[2] + m[3]
		if slices.Contains(exceptions, name) {
			set["exc."+name] = true
		}
	}
	if mixedResults(out) {
		set["test.passed_and_failed"] = true
	}
	names := make([]string, 0, len(set))
	for k := range set {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// describeFeature is a feature as evidence a person reads, "" for
// features that are no evidence to a person (the program, the exit
// status 1, the output's length).
func describeFeature(f string) string {
	switch f {
	case "exit.124":
		return "exit status 124: a timeout stopped the command"
	case "exit.137":
		return "exit status 137: the command was killed"
	case "exit.127":
		return "exit status 127: the command was not found or could not run"
	case "test.passed_and_failed":
		return "the same test both passed and failed"
	case "mod.own":
		return "the missing module is the project's own"
	case "mod.relative":
		return "the missing module is a relative path"
	case "mod.near_std":
		return "the missing module is, or misspells, a standard library module"
	case "mod.other":
		return "the missing module is neither the project's nor the standard library's"
	case "mod.runner":
		return "the missing module is the program the command runs (python -m): the interpreter does not have it"
	case "arg.offline":
		return "the command runs offline"
	case "arg.race":
		return "the command runs the race detector"
	}
	return ""
}

// exception finds the class of an error a runtime raised: Python's and
// JavaScript's error lines, node --test's name field.
var exception = regexp.MustCompile(`(?m)^(?:E\s+|\s*|.*?\b)([A-Z]\w*(?:Error|Exception|Interrupt|Exit)): |^\s+name: '(\w+)'|^(?:\w+\.)*(\w+Error)$`)

// exceptions are the error classes that are features.
var exceptions = []string{"AssertionError", "TypeError", "RangeError", "ReferenceError", "SyntaxError", "KeyError",
	"IndexError", "ValueError", "AttributeError", "NameError", "ZeroDivisionError", "RecursionError", "RuntimeError",
	"ImportError", "ModuleNotFoundError", "PermissionError", "FileNotFoundError", "OSError", "MemoryError",
	"TimeoutError", "UnboundLocalError", "NotImplementedError", "Error"}

// testResult finds a test's name and whether it passed, in the result
// lines of go test -v, pytest -v, cargo test, node --test and Jest.
var testResult = regexp.MustCompile(`(?m)^\s*--- (PASS|FAIL): (\S+)|^(\S+::\S+) (PASSED|FAILED)|^test (\S+) \.\.\. (ok|FAILED)$|^(ok|not ok) \d+ - (.+)$|^\s*(✓|✕|×|√|✗|✔|✖) (.+?)(?: \(?[\d.]+ ?m?s\)?)?$`)

// mixedResults reports whether one test both passed and failed in the
// same output (a test run repeatedly: -count, --keep-duplicates, a retry).
func mixedResults(out string) bool {
	// Runs of one command repeated (a loop of cargo test -q) say so only
	// in their summaries.
	if strings.Contains(out, "test result: ok.") && strings.Contains(out, "test result: FAILED.") {
		return true
	}
	seen := map[string]int{} // 1 passed, 2 failed
	for _, m := range testResult.FindAllStringSubmatch(out, 2000) {
		var name, verdict string
		switch {
		case m[2] != "":
			name, verdict = m[2], m[1]
		case m[3] != "":
			name, verdict = m[3], m[4]
		case m[5] != "":
			name, verdict = m[5], m[6]
		case m[8] != "":
			name, verdict = m[8], m[7]
		default:
			name, verdict = m[10], m[9]
			if verdict != "✓" && verdict != "√" && verdict != "✔" {
				verdict = "fail"
			}
		}
		bit := 1
		if strings.Contains(strings.ToLower(verdict), "fail") || verdict == "not ok" {
			bit = 2
		}
		seen[name] |= bit
		if seen[name] == 3 {
			return true
		}
	}
	return false
}

// wrappers run the program that follows their options.
var wrappers = map[string]bool{"env": true, "runuser": true, "sudo": true, "timeout": true, "nice": true, "exec": true,
	"time": true, "npx": true, "xargs": true, "command": true}

// commandPrograms are the programs a shell command line runs: the first
// word of each of its commands (split at ;, &&, ||, |), past variable
// assignments and wrappers (env, runuser, timeout, npx …), and the module
// of python -m.
func commandPrograms(command string) []string {
	var out []string
	for _, seg := range regexp.MustCompile(`&&|\|\||[;|()]|\bthen\b|\bdo\b`).Split(command, -1) {
		words := strings.Fields(seg)
		for i := 0; i < len(words); i++ {
			w := strings.Trim(words[i], `"'`)
			switch {
			case w == "-u" && i > 0 && words[i-1] == "env":
				i++ // env -u NAME
				continue
			case w == "" || strings.Contains(w, "=") && !strings.HasPrefix(w, "-"), strings.HasPrefix(w, "-"), w == "--":
				continue // an assignment or a wrapper's option
			case wrappers[w]:
				if w == "timeout" && i+1 < len(words) && !strings.HasPrefix(words[i+1], "-") {
					i++ // its duration
				}
				if w == "runuser" || w == "sudo" {
					for i+1 < len(words) && words[i+1] != "--" {
						i++
					}
				}
				continue
			}
			base := w[strings.LastIndex(w, "/")+1:]
			if base == "" {
				continue
			}
			out = append(out, base)
			if strings.HasPrefix(base, "python") && i+2 < len(words) && words[i+1] == "-m" {
				out = append(out, words[i+2])
			}
			break
		}
	}
	return out
}

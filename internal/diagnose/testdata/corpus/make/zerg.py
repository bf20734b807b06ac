#!/usr/bin/env python3
"""zerg samples: the pinned Claude Code CLI (tools/claude) against zerg's scripted
Messages API (zerg mockapi serve) with faults, and real zerg rehearsals / checks
of the bundled demo project (examples/demo) with a scenario or task graph that
makes a worker change nothing, write a file it does not own, write a secret, or
with verifications that cannot fail and protected paths in the graph.

Needs: zerg built to $SCRATCH/zerg (go build -o $SCRATCH/zerg ./cmd/zerg in the
zerg checkout) and the pinned CLI at $ZERG_SRC/tools/claude/node_modules/.bin/claude."""
import json
import os
import shutil
import signal
import subprocess
import sys
import time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib import Corpus, SCRATCH, sh, base_env, truncate  # noqa: E402

ZSRC = os.environ.get("ZERG_SRC", "/work/main")
ZERG = os.path.join(SCRATCH, "zerg")
CLAUDE_BIN = os.path.join(ZSRC, "tools", "claude", "node_modules", ".bin")
PORT = 18431
URL = f"http://127.0.0.1:{PORT}"
PROJECT_CLI = "Claude Code CLI (pinned in tools/claude) + zerg mockapi"
PROJECT_DEMO = "zerg examples/demo (greeter shell project) + zerg rehearsal"


class Server:
    def __init__(self, scenario_path):
        self.scenario = scenario_path
        self.p = None

    def __call__(self, work):
        open(os.path.join(work, "scenario.yaml"), "w").write(open(self.scenario).read() if os.path.exists(self.scenario) else self.scenario)
        self.p = subprocess.Popen([ZERG, "mockapi", "serve", "--scenario", os.path.join(work, "scenario.yaml"), "--port", str(PORT)],
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
        self.p.stdout.readline()

    def stop(self, work=None):
        if self.p:
            os.killpg(self.p.pid, signal.SIGTERM)
            self.p.wait()
            self.p = None


def cli_env(work_home, **extra):
    env = base_env(ANTHROPIC_BASE_URL=URL, ANTHROPIC_API_KEY="sk-corpus-test-key",
                   CLAUDE_CODE_MAX_RETRIES="0", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
                   HOME=work_home, CLAUDE_CONFIG_DIR=os.path.join(work_home, ".claude"), TERM=None)
    env["PATH"] = CLAUDE_BIN + ":" + env["PATH"]
    env.update({k: v for k, v in extra.items() if v is not None})
    for k, v in extra.items():
        if v is None:
            env.pop(k, None)
    return env


def scen(tasks_yaml):
    return "title: corpus\nusage: {input_tokens: 900, output_tokens: 120}\n" + tasks_yaml


def cli_case(C, pattern, brk, scenario, command, expect, env_extra=None, timeout=180, allow_zero=False):
    home = os.path.join(SCRATCH, "run", "zerg", "claude-home")
    shutil.rmtree(home, ignore_errors=True)
    os.makedirs(home)
    sc = os.path.join(SCRATCH, "run", "zerg", "scenario-src.yaml")
    os.makedirs(os.path.dirname(sc), exist_ok=True)
    ops = []
    srv = None
    if scenario is not None:
        open(sc, "w").write(scenario)
        srv = Server(sc)
        ops.append(srv)
    env = cli_env(home, **(env_extra or {}))
    try:
        C.run(pattern, PROJECT_CLI, None, brk, ops, command, expect, env=env, timeout=timeout,
              allow_zero=allow_zero, post=(srv.stop if srv else None), extra_paths=(home,))
    finally:
        if srv:
            srv.stop()


def demo_repo(work, graph_edit=None, scenario=None, config_extra=None):
    if os.path.exists(work):
        shutil.rmtree(work)
    shutil.copytree(os.path.join(ZSRC, "examples", "demo"), work)
    g = "git -c user.name=corpus -c user.email=corpus@invalid"
    sh(f"git init -q -b main && git add -A && {g} commit -qm 'greeter: empty project' && {ZERG} init >/dev/null", cwd=work)
    if scenario:
        open(os.path.join(work, ".zerg/specs/demo/scenario.yaml"), "w").write(scenario)
    if graph_edit:
        p = os.path.join(work, ".zerg/specs/demo/task-graph.json")
        gr = json.load(open(p))
        graph_edit(gr)
        json.dump(gr, open(p, "w"), indent=2)
    if config_extra:
        open(os.path.join(work, ".zerg/config.yaml"), "a").write(config_extra)
    sh(f"git add -A && {g} commit -q --no-verify -m 'zerg init'", cwd=work)


def rush_env():
    env = base_env(ZERG_CLAUDE=os.path.join(CLAUDE_BIN, "claude"), ZERG_WORKSPACES=os.path.join(SCRATCH, "zws"))
    return env


def rehearsal(C, pattern, name, scenario, graph_edit, picks, extra_cmd=""):
    """picks: {(task, attempt): break description}; takes data.detail of those attempts."""
    work = os.path.join(SCRATCH, "run", "zerg", name)
    shutil.rmtree(os.path.join(SCRATCH, "zws"), ignore_errors=True)
    demo_repo(work, graph_edit, scenario)
    cmd = f"zerg rush demo --rehearse --mode subprocess --yes{extra_cmd}"
    r = subprocess.run(ZERG + cmd[4:], shell=True, cwd=work, env=rush_env(), stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=600)
    got = {}
    for line in open(os.path.join(work, ".zerg/runs/demo/events.jsonl")):
        e = json.loads(line)
        if e.get("type") == "attempt_finished":
            got[(e["task"], e["attempt"])] = e["data"]
    for key, brk in picks.items():
        d = got.get(key)
        if not d or not d.get("detail"):
            print(f"  REJECT {pattern} {key}: no detail ({d and d.get('reason')})", file=sys.stderr)
            C.failed.append((pattern, brk, "no detail"))
            continue
        if d.get("reason") not in PATTERN_REASONS[pattern]:
            print(f"  REJECT {pattern} {key}: reason {d.get('reason')}: {d.get('detail')[:200]}", file=sys.stderr)
            C.failed.append((pattern, brk, f"reason {d.get('reason')}"))
            continue
        out = C.normalize(d["detail"], work, None, (os.path.join(SCRATCH, "zws"),))
        out, _ = truncate(out)
        C.samples.append({"id": None, "language": "zerg", "pattern": pattern, "project": PROJECT_DEMO,
                          "break": brk + f" (attempt {key[1]} of task {key[0]}; output = data.detail of its attempt_finished event in .zerg/runs/demo/events.jsonl)",
                          "command": "ZERG_CLAUDE=tools/claude/node_modules/.bin/claude " + cmd, "exit": r.returncode, "output": out})
        print(f"  ok {pattern:24s} {key} {out[:90]!r}", file=sys.stderr)


PATTERN_REASONS = {"empty_change": {"empty_change"}, "ownership_violation": {"ownership"},
                   "secret_found": {"secret_found"}, "worker_crash": {"worker_crash", "crash", "no_result", "cli_crash"},
                   "rate_limited": {"rate_limited"}}


def set_verification(task, command):
    def f(gr):
        for t in gr["tasks"]:
            if t["id"] == task:
                t["verification"]["command"] = command
    return f


def chain(*fs):
    def f(gr):
        for x in fs:
            x(gr)
    return f


def main():
    C = Corpus("zerg")
    only = C.only

    def want(p):
        return not only or p in only.split(",")

    # ---------------------------------------------------------------- CLI faults
    T = 'tasks:\n  - name: t\n    match_regexp: "(?s)."\n    turns:\n      - text: "done"\n'
    if want("rate_limited"):
        cli_case(C, "rate_limited", "every request answered 429 rate_limit_error (default message)",
                 scen(T + "    faults:\n      - {http: 429, retry_after: 1}\n"),
                 'claude -p "Fix the failing test in lib/greet.sh" --output-format json', r"429")
        cli_case(C, "rate_limited", "429 with the API's per-minute token message",
                 scen(T + "    faults:\n      - {http: 429, retry_after: 20, message: \"This request would exceed the rate limit for your organization of 40,000 input tokens per minute. For details, refer to: https://docs.anthropic.com/en/api/rate-limits.\"}\n"),
                 'claude -p "Summarise the README" --output-format json --model sonnet', r"rate limit")
        cli_case(C, "rate_limited", "429 on every request, plain text output",
                 scen(T + "    faults:\n      - {http: 429, retry_after: 2, message: \"Number of request tokens has exceeded your per-minute rate limit\"}\n"),
                 'claude -p "Write docs/usage.md"', r"429|rate limit")
        cli_case(C, "rate_limited", "429 after the first turn (a tool call succeeded first), stream-json output",
                 scen('tasks:\n  - name: t\n    match_regexp: "(?s)."\n    turns:\n      - tools: [{name: Bash, input: {command: "ls", description: "list"}}]\n      - text: "done"\n    faults:\n      - {http: 429, turn: 2, retry_after: 1, message: "Number of requests has exceeded your per-minute rate limit"}\n'),
                 'claude -p "List the files, then stop" --output-format stream-json --verbose --allowedTools Bash', r"429")
        cli_case(C, "rate_limited", "429 persists through one retry (CLAUDE_CODE_MAX_RETRIES=1)",
                 scen(T + "    faults:\n      - {http: 429, retry_after: 1, message: \"Output tokens per minute limit exceeded\"}\n"),
                 'CLAUDE_CODE_MAX_RETRIES=1 claude -p "Add a test for upper" --output-format json', r"429")
        cli_case(C, "rate_limited", "429 with error type rate_limit_error and should_retry false",
                 scen(T + "    faults:\n      - {http: 429, should_retry: false, message: \"Your account has hit a rate limit.\"}\n"),
                 'claude -p "Rename greet to hello" --output-format json --max-turns 5', r"rate limit|429")
    if want("auth_failed"):
        cli_case(C, "auth_failed", "401 authentication_error invalid x-api-key",
                 scen(T + "    faults:\n      - {http: 401, message: \"invalid x-api-key\"}\n"),
                 'claude -p "Fix the failing test" --output-format json', r"401|invalid x-api-key")
        cli_case(C, "auth_failed", "401 on every request, text output",
                 scen(T + "    faults:\n      - {http: 401, message: \"invalid x-api-key\"}\n"),
                 'claude -p "Explain lib/upper.sh"', r"401|invalid|API key|log")
        cli_case(C, "auth_failed", "401 with an expired-OAuth-token style message, stream-json",
                 scen(T + "    faults:\n      - {http: 401, message: \"OAuth token has expired. Please obtain a new token or refresh your existing token.\"}\n"),
                 'claude -p "Write tests/run.sh" --output-format stream-json --verbose', r"401|OAuth")
        cli_case(C, "auth_failed", "401 survives one retry (CLAUDE_CODE_MAX_RETRIES=1)",
                 scen(T + "    faults:\n      - {http: 401, message: \"invalid x-api-key\"}\n"),
                 'CLAUDE_CODE_MAX_RETRIES=1 claude -p "Add bin/shout" --output-format json', r"401|invalid")
        cli_case(C, "auth_failed", "401 with the key passed as an empty-looking placeholder",
                 scen(T + "    faults:\n      - {http: 401, error_type: authentication_error, message: \"Invalid bearer token\"}\n"),
                 'ANTHROPIC_API_KEY=changeme claude -p "hello" --output-format json', r"401|Invalid bearer")
        cli_case(C, "auth_failed", "401 only after the first turn (a key revoked mid-run)",
                 scen('tasks:\n  - name: t\n    match_regexp: "(?s)."\n    turns:\n      - tools: [{name: Bash, input: {command: "echo start", description: "start"}}]\n      - text: "done"\n    faults:\n      - {http: 401, turn: 2, message: "invalid x-api-key"}\n'),
                 'claude -p "Run the build" --output-format json --allowedTools Bash', r"401|invalid")
    if want("api_unreachable"):
        cli_case(C, "api_unreachable", "ANTHROPIC_BASE_URL points at a closed local port", None,
                 'ANTHROPIC_BASE_URL=http://127.0.0.1:9 claude -p "Fix the failing test" --output-format json', r"Connection|connect|ECONNREFUSED|Unable to connect")
        cli_case(C, "api_unreachable", "ANTHROPIC_BASE_URL host does not resolve", None,
                 'ANTHROPIC_BASE_URL=https://llm-gateway.corp.invalid claude -p "hello" --output-format json', r"Connection|connect|ENOTFOUND|Unable to connect|getaddrinfo")
        cli_case(C, "api_unreachable", "the server closes every connection before answering (drop: before_headers)",
                 scen(T + "    faults:\n      - {drop: before_headers}\n"),
                 'claude -p "Write docs/usage.md" --output-format json', r"Connection|connect|socket|closed|Unable")
        cli_case(C, "api_unreachable", "closed port, text output", None,
                 'ANTHROPIC_BASE_URL=http://127.0.0.1:9 claude -p "List the tasks"', r"Connection|connect|Unable")
        cli_case(C, "api_unreachable", "curl of the messages endpoint on a closed port", None,
                 'curl -sS -m 5 -X POST http://127.0.0.1:9/v1/messages -H "x-api-key: $ANTHROPIC_API_KEY" -d "{}"', r"Failed to connect|Couldn't connect")
        cli_case(C, "api_unreachable", "closed port, stream-json output with one retry", None,
                 'ANTHROPIC_BASE_URL=http://127.0.0.1:9 CLAUDE_CODE_MAX_RETRIES=1 claude -p "hello" --output-format stream-json --verbose', r"Connection|connect|Unable")
        cli_case(C, "api_unreachable", "the server accepts and never answers; API_TIMEOUT_MS=3000",
                 scen(T + "    faults:\n      - {stall: before_headers, duration: 30s}\n"),
                 'API_TIMEOUT_MS=3000 claude -p "hello" --output-format json', r"timed out|timeout|Timeout|Connection|connect")
    if want("max_turns"):
        loop = lambda tool: scen(f'tasks:\n  - name: t\n    match_regexp: "(?s)."\n    turns:\n' + "".join(f"      - tools: [{tool}]\n" for _ in range(6)) + '      - text: "done"\n')
        cli_case(C, "max_turns", "the model keeps calling Bash; --max-turns 1",
                 loop('{name: Bash, input: {command: "ls", description: "list"}}'),
                 'claude -p "Explore the repository" --output-format json --max-turns 1 --allowedTools Bash', r"error_max_turns")
        cli_case(C, "max_turns", "the model keeps reading files; --max-turns 2",
                 loop('{name: Read, input: {file_path: scenario.yaml}}'),
                 'claude -p "Read every file" --output-format json --max-turns 2', r"error_max_turns")
        cli_case(C, "max_turns", "the model keeps globbing; --max-turns 3, stream-json",
                 loop('{name: Glob, input: {pattern: "**/*"}}'),
                 'claude -p "Find the tests" --output-format stream-json --verbose --max-turns 3', r"error_max_turns")
        cli_case(C, "max_turns", "the model keeps calling Bash; --max-turns 2, text output",
                 loop('{name: Bash, input: {command: "echo step", description: "step"}}'),
                 'claude -p "Keep going until the build passes" --max-turns 2 --allowedTools Bash', r"max turns|Max turns|maximum number of turns|error_max_turns")
        cli_case(C, "max_turns", "the model keeps writing a file; --max-turns 1",
                 loop('{name: Write, input: {file_path: notes.txt, content: "x\\n"}}'),
                 'claude -p "Write notes" --output-format json --max-turns 1 --allowedTools Write', r"error_max_turns")
        cli_case(C, "max_turns", "the model keeps grepping; --max-turns 4",
                 loop('{name: Grep, input: {pattern: "greet"}}'),
                 'claude -p "Find every caller of greet" --output-format json --max-turns 4', r"error_max_turns")
    if want("context_exhausted"):
        msg = lambda a, b: f'    faults:\n      - {{http: 400, message: "prompt is too long: {a} tokens > {b} maximum"}}\n'
        cli_case(C, "context_exhausted", "400 prompt is too long (215000 > 200000)", scen(T + msg(215342, 200000)),
                 'claude -p "Review the whole repository" --output-format json', r"(?i)prompt is too long")
        cli_case(C, "context_exhausted", "400 prompt is too long, text output", scen(T + msg(204811, 200000)),
                 'claude -p "Summarise every log file"', r"(?i)prompt is too long")
        cli_case(C, "context_exhausted", "400 prompt is too long on turn 2 after a big Read",
                 scen('tasks:\n  - name: t\n    match_regexp: "(?s)."\n    turns:\n      - tools: [{name: Read, input: {file_path: scenario.yaml}}]\n      - text: "done"\n    faults:\n      - {http: 400, turn: 2, message: "prompt is too long: 1048576 tokens > 1000000 maximum"}\n'),
                 'claude -p "Read scenario.yaml and explain it" --output-format json', r"(?i)prompt is too long")
        cli_case(C, "context_exhausted", "400 prompt is too long, stream-json", scen(T + msg(200017, 200000)),
                 'claude -p "Explain the diff" --output-format stream-json --verbose', r"(?i)prompt is too long")
        cli_case(C, "context_exhausted", "400 prompt is too long with --model opus", scen(T + msg(231000, 200000)),
                 'claude -p "Plan the refactor" --output-format json --model opus', r"(?i)prompt is too long")
        cli_case(C, "context_exhausted", "400 prompt is too long with one retry allowed", scen(T + msg(201500, 200000)),
                 'CLAUDE_CODE_MAX_RETRIES=1 claude -p "Audit the code" --output-format json', r"(?i)prompt is too long")
    if want("worker_crash"):
        slow = scen(T.replace('      - text: "done"\n', '      - text: "done"\n        delay: 30s\n'))
        cli_case(C, "worker_crash", "the CLI is killed with SIGKILL while it waits for the model (stream-json shows the run start, no result)",
                 slow, 'timeout -s KILL 8 claude -p "Fix the failing test" --output-format stream-json --verbose', r'"type":"system"')
        cli_case(C, "worker_crash", "the CLI is killed with SIGSEGV mid-run",
                 slow, 'timeout -s SEGV 8 claude -p "Write docs/usage.md" --output-format stream-json --verbose', r'"type":"system"|Segmentation')
        cli_case(C, "worker_crash", "the CLI is killed with SIGABRT mid-run",
                 slow, 'timeout -s ABRT 8 claude -p "hello" --output-format stream-json --verbose', r'"type":"system"|Aborted')
        cli_case(C, "worker_crash", "the claude binary replaced by a truncated file (exec format error)", None,
                 'printf "\\177ELF\\002\\001" > ./claude && chmod +x ./claude && ./claude -p "hello" --output-format json', r"Exec format error|cannot execute")
        cli_case(C, "worker_crash", "the CLI is killed with SIGKILL after its first tool call (stream-json stops mid-run)",
                 scen('tasks:\n  - name: t\n    match_regexp: "(?s)."\n    turns:\n      - tools: [{name: Bash, input: {command: "echo step1", description: "step"}}]\n      - text: "done"\n        delay: 30s\n'),
                 'timeout -s KILL 10 claude -p "Run step one, then finish" --output-format stream-json --verbose --allowedTools Bash', r'"type":"user"')
        work = os.path.join(SCRATCH, "run", "zerg", "crash")
        shutil.rmtree(os.path.join(SCRATCH, "zws"), ignore_errors=True)
        demo_repo(work)
        env = rush_env()
        env["ZERG_CLAUDE"] = "/bin/false"
        r = subprocess.run(ZERG + " rush demo --rehearse --mode subprocess --yes --no-check", shell=True, cwd=work, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600)
        out, _ = truncate(C.normalize(r.stdout.decode(), work, None, (os.path.join(SCRATCH, "zws"),)))
        C.samples.append({"id": None, "language": "zerg", "pattern": "worker_crash", "project": PROJECT_DEMO,
                          "break": "ZERG_CLAUDE=/bin/false: every worker's CLI exits 1 at once without a result; output = the rush's own output",
                          "command": "ZERG_CLAUDE=/bin/false zerg rush demo --rehearse --mode subprocess --yes --no-check", "exit": r.returncode, "output": out})

    # ---------------------------------------------------------------- zerg verdicts
    N_OK = '      - text: "Done."\n'
    if want("empty_change"):
        s = """title: corpus
usage: {input_tokens: 1200, output_tokens: 150}
tasks:
  - name: names
    match: "Task L1-names:"
    turns:
      - tools: [{name: Read, input: {file_path: README.md}}]
      - text: "data/names.txt is not needed; the README already lists the names."
  - name: greet
    match: "Task L1-greet:"
    turns:
      - tools: [{name: Bash, input: {command: "ls -la", description: "look around"}}]
      - text: "Looked at the project; greet is already available."
  - name: upper
    match: "Task L1-upper:"
    turns:
      - tools: [{name: Bash, input: {command: "mkdir -p lib && printf 'upper() { tr a-z A-Z; }\\\\n' > lib/upper.sh && rm lib/upper.sh", description: "draft"}}]
      - text: "Drafted upper and removed the draft again."
  - name: docs
    match: "Task L1-docs:"
    turns:
      - text: "The usage notes are fine as they are."
default:
  turns:
    - text: "done"
"""
        ge = chain(set_verification("L1-names", "true"), set_verification("L1-greet", "sh -n README.md || true"),
                   set_verification("L1-upper", "test -d ."), set_verification("L1-docs", "exit 0"))
        rehearsal(C, "empty_change", "empty", s, ge, {
            ("L1-names", 1): "L1-names only reads README.md and answers; its verification is `true`",
            ("L1-names", 2): "L1-names only reads README.md and answers (retry); verification `true`",
            ("L1-greet", 1): "L1-greet runs `ls -la` and stops; verification `sh -n README.md || true`",
            ("L1-greet", 2): "L1-greet runs `ls -la` and stops (retry)",
            ("L1-upper", 1): "L1-upper writes lib/upper.sh and deletes it again (net no change); verification `test -d .`",
            ("L1-docs", 1): "L1-docs answers with text only; verification `exit 0`",
            ("L1-docs", 2): "L1-docs answers with text only (retry)",
        }, " --no-check")
    if want("ownership_violation"):
        s = """title: corpus
usage: {input_tokens: 1200, output_tokens: 150}
tasks:
  - name: names
    match: "Task L1-names:"
    turns:
      - tools: [{name: Write, input: {file_path: data/names.txt, content: "Ada\\nGrace\\nLinus\\n"}}]
      - tools: [{name: Bash, input: {command: "mkdir -p lib && printf 'greet() { echo hi; }\\\\n' > lib/extra.sh", description: "helper"}}]
      - text: "Created data/names.txt and a helper."
  - name: greet
    match: "Task L1-greet:"
    turns:
      - tools: [{name: Write, input: {file_path: lib/greet.sh, content: "greet() {\\n  printf 'Hello, %s!\\\\n' \\"$1\\"\\n}\\n"}}]
      - tools: [{name: Bash, input: {command: "mkdir -p data && printf 'Ada\\\\n' > data/names.txt", description: "sample data"}}]
      - text: "Added greet and sample data."
  - name: upper
    match: "Task L1-upper:"
    turns:
      - tools: [{name: Write, input: {file_path: lib/upper.sh, content: "upper() {\\n  tr '[:lower:]' '[:upper:]'\\n}\\n"}}]
      - tools: [{name: Bash, input: {command: "printf '# upper\\\\n' > README.md", description: "doc"}}]
      - text: "Added upper and updated the README."
  - name: docs
    match: "Task L1-docs:"
    turns:
      - tools: [{name: Write, input: {file_path: docs/usage.md, content: "# Usage\\n\\n- `sh bin/greet-all` greets every name.\\n"}}]
      - tools: [{name: Bash, input: {command: "mkdir -p bin && printf '#!/bin/sh\\\\n' > bin/greet-all", description: "stub"}}]
      - text: "Wrote docs/usage.md and a stub."
default:
  turns:
    - text: "done"
"""
        rehearsal(C, "ownership_violation", "ownership", s, None, {
            ("L1-names", 1): "L1-names also writes lib/extra.sh (owned by no task)",
            ("L1-names", 2): "L1-names also writes lib/extra.sh (retry)",
            ("L1-greet", 1): "L1-greet also writes data/names.txt (owned by L1-names)",
            ("L1-greet", 2): "L1-greet also writes data/names.txt (retry)",
            ("L1-upper", 1): "L1-upper also rewrites README.md (not owned)",
            ("L1-upper", 2): "L1-upper also rewrites README.md (retry)",
            ("L1-docs", 1): "L1-docs also writes bin/greet-all (owned by L2-greet-all)",
            ("L1-docs", 2): "L1-docs also writes bin/greet-all (retry)",
        })
    if want("secret_found"):
        s = """title: corpus
usage: {input_tokens: 1200, output_tokens: 150}
tasks:
  - name: names
    match: "Task L1-names:"
    turns:
      - tools: [{name: Write, input: {file_path: data/names.txt, content: "Ada\\nGrace\\nLinus\\n# github_pat_11AZQ3LAY0aBcDeFgHiJkL_mNoPqRsTuVwXyZ0123456789abcdefGHIJKLMNOPQRSTUVWXYZ012345\\n"}}]
      - text: "Created data/names.txt."
  - name: greet
    match: "Task L1-greet:"
    turns:
      - tools: [{name: Write, input: {file_path: lib/greet.sh, content: "# deploy key\\n# -----BEGIN OPENSSH PRIVATE KEY-----\\n# b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZWQyNTUxOQAAACDzL0r7mJq4h3yVQk8Wc1xN5pT2aB6dE9fG0hI3jK4lMwAAAJgAAAAA\\n# -----END OPENSSH PRIVATE KEY-----\\ngreet() {\\n  printf 'Hello, %s!\\\\n' \\"$1\\"\\n}\\n"}}]
      - text: "Added greet."
  - name: upper
    match: "Task L1-upper:"
    turns:
      - tools: [{name: Write, input: {file_path: lib/upper.sh, content: "# token for the upload step\\nAPI_KEY=sk-ant-api03-Xq7vN2pLm9RtK4wZ8yB3cD6fH1jG5sA0eU7iO2kP9lM4nQ8rT3vW6xY1zC5bE0dF7gH2jK9mN4pR8sAA\\nupper() {\\n  tr '[:lower:]' '[:upper:]'\\n}\\n"}}]
      - text: "Added upper."
  - name: docs
    match: "Task L1-docs:"
    turns:
      - tools: [{name: Write, input: {file_path: docs/usage.md, content: "# Usage\\n\\nUpload with AWS_ACCESS_KEY_ID=AKIAZ7QW3XJ5RTY2KPLM and AWS_SECRET_ACCESS_KEY=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\\n\\n- `sh bin/greet-all` greets every name.\\n"}}]
      - text: "Wrote docs/usage.md."
default:
  turns:
    - text: "done"
"""
        rehearsal(C, "secret_found", "secrets", s, None, {
            ("L1-upper", 1): "L1-upper writes a fake Anthropic key (sk-ant-api03-…AA) into lib/upper.sh",
            ("L1-upper", 2): "L1-upper writes the fake Anthropic key again (retry)",
            ("L1-docs", 1): "L1-docs writes a fake AWS access key pair into docs/usage.md",
            ("L1-docs", 2): "L1-docs writes the fake AWS key pair again (retry)",
            ("L1-names", 1): "L1-names writes a fake fine-grained GitHub token into data/names.txt",
            ("L1-greet", 1): "L1-greet writes a fake OpenSSH private key block into lib/greet.sh",
        })
        work = os.path.join(SCRATCH, "run", "zerg", "scan")
        demo_repo(work)
        for fname, content, brk in (
            ("config/prod.env", "STRIPE_KEY=sk_live_51HqZ8x2eZvKYlo2C0aB1cD2eF3gH4iJ5kL6mN7oP8qR9sT0uV1wX2yZ3\n", "a fake Stripe live key in config/prod.env"),
            ("scripts/notify.sh", "#!/bin/sh\ncurl -X POST https://hooks.slack.com/services/T0ABC1DEF/B0GHI2JKL/abcdefghijklmnopqrstuvwx -d 'done'\n", "a fake Slack webhook URL in scripts/notify.sh"),
            ("lib/api.sh", "export ANTHROPIC_API_KEY=sk-ant-api03-b7Hq2LmN9pR4tV8wX1yZ3aC6dF0gJ5kM2nP7qS9uW4xB8eH1iL6oT3vY0zA5cD9fG2jK7mN4pQ1sAA\n", "a fake Anthropic key in lib/api.sh"),
        ):
            C.run("secret_found", PROJECT_DEMO, work, "`zerg scan` of " + brk, [("write", fname, content)],
                  f"zerg scan {fname}", r"secret", env=base_env(PATH=os.path.dirname(ZERG) + ":" + os.environ["PATH"]))
    if want("protected_path") or want("check_cannot_fail"):
        def create(task, path):
            def f(gr):
                for t in gr["tasks"]:
                    if t["id"] == task:
                        t["files"]["create"] = [path]
            return f

        def modify(task, path):
            def f(gr):
                for t in gr["tasks"]:
                    if t["id"] == task:
                        t["files"]["modify"].append(path)
            return f
        zenv = base_env(ZERG_CLAUDE=os.path.join(CLAUDE_BIN, "claude"), ZERG_WORKSPACES=os.path.join(SCRATCH, "zws"))
        zenv["PATH"] = os.path.dirname(ZERG) + ":" + zenv["PATH"]
        cases = []
        if want("protected_path"):
            cases += [
                ("protected_path", "task L1-greet creates .github/workflows/ci.yml", create("L1-greet", ".github/workflows/ci.yml"), None, "zerg graph validate demo"),
                ("protected_path", "task L1-docs modifies .gitattributes", modify("L1-docs", ".gitattributes"), None, "zerg check demo --mode subprocess"),
                ("protected_path", "task L1-names creates .zerg/config.yaml", create("L1-names", ".zerg/config.yaml"), None, "zerg graph validate demo"),
                ("protected_path", "task L1-upper creates .claude/settings.json", create("L1-upper", ".claude/settings.json"), None, "zerg rush demo --rehearse --mode subprocess --yes"),
                ("protected_path", "task L2-shout creates .gitlab-ci.yml", create("L2-shout", ".gitlab-ci.yml"), None, "zerg graph validate demo"),
                ("protected_path", "task L1-docs creates .husky/pre-commit", create("L1-docs", ".husky/pre-commit"), None, "zerg graph show demo"),
                ("protected_path", "security.protected_paths lists docs/** in .zerg/config.yaml; L1-docs creates docs/usage.md", None, "security:\n  protected_paths: [\"docs/**\"]\n", "zerg graph validate demo"),
            ]
        if want("check_cannot_fail"):
            cases += [
                ("check_cannot_fail", "L1-docs verification replaced by `true`", set_verification("L1-docs", "true"), None, "zerg check demo --mode subprocess"),
                ("check_cannot_fail", "L1-names verification `test -d .`", set_verification("L1-names", "test -d ."), None, "zerg check demo --mode subprocess"),
                ("check_cannot_fail", "L1-greet verification `echo ok`", set_verification("L1-greet", "echo ok"), None, "zerg check demo --mode subprocess --strict"),
                ("check_cannot_fail", "L2-shout verification `ls`", set_verification("L2-shout", "ls"), None, "zerg check demo --mode subprocess"),
                ("check_cannot_fail", "L1-upper verification `grep -q upper README.md || true`", set_verification("L1-upper", "grep -q upper README.md || true"), None, "zerg check demo --mode subprocess --strict"),
                ("check_cannot_fail", "L3-tests verification `exit 0`", set_verification("L3-tests", "exit 0"), None, "zerg check demo --mode subprocess"),
                ("check_cannot_fail", "L2-greet-all verification `sh -n README.md`", set_verification("L2-greet-all", "sh -n README.md"), None, "zerg check demo --mode subprocess --json"),
            ]
        for i, (pattern, brk, ge, cfg, cmd) in enumerate(cases):
            work = os.path.join(SCRATCH, "src", "zerg", f"graph{i}")
            demo_repo(work, ge, None, cfg)
            C.run(pattern, PROJECT_DEMO, work, brk + " (.zerg/specs/demo/task-graph.json)", [], cmd,
                  r"protected" if pattern == "protected_path" else r"cannot fail|can't fail|passes on the base|already passes|cannot_fail",
                  env=zenv, allow_zero=True)
    C.write()


if __name__ == "__main__":
    main()

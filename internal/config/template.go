package config

import "strings"

// Template returns the commented config that zerg init writes. It sets every
// option to its default, so it loads to exactly Default() (a test holds it to
// that), and says what each option does. docs/configuration.md has more.
func Template() []byte { return []byte(template) }

// TemplateWithDevcontainer is Template for a repository that has a
// devcontainer at path (relative to its root): a comment right above mode
// says container mode would run workers in its image. mode stays sandbox;
// choosing container mode is the user's.
func TemplateWithDevcontainer(path string) []byte {
	path = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, path)
	note := "# A devcontainer was found at " + path + ": mode: container runs workers in its image (docs/container.md).\n"
	return []byte(strings.Replace(template, "\n"+templateModeLine, "\n"+note+templateModeLine, 1))
}

// templateModeLine is the template's mode option, a whole line.
const templateModeLine = "mode: sandbox\n"

const template = `# zerg project configuration. Every option is shown with its default;
# delete a line to keep the default. Reference: docs/configuration.md.
# Check your edits with: zerg config check
version: 1

# How many Claude Code workers run at once (1-64).
workers: 4
# Worker isolation. sandbox: each worker, its verification and the gates run
# in a bubblewrap sandbox as an unprivileged user of their own, with a private
# clone of the base, no network but the model API through a host gateway
# that holds the key, and limits (zerg doctor says whether this machine can).
# container: the same, in a container of the project's own image (its
# devcontainer, or container.image) with podman or docker (docs/container.md).
# subprocess: a process group, a worktree and a policy hook only; weaker (see
# docs/security.md). tasks: your own Claude Code session runs the workers as
# Task subagents (/zerg:rush FEATURE --mode tasks); no OS isolation, the
# commit checks are the boundary (docs/modes.md). zerg never falls back from
# one to the other by itself.
mode: sandbox
# level: run a whole level, merge it through the gates (all of it or
# nothing), then the next. dag: a task starts as soon as its dependencies
# are merged; finished tasks merge in batches through the gates, and a
# batch that fails them is bisected to the task that broke it
# (docs/schedule.md).
schedule: level

claude:
  # The Claude Code binary: a path or a name looked up in PATH. Empty: the
  # ZERG_CLAUDE variable, then the pinned install (make claude), then PATH.
  path: ""
  # API endpoint for workers (ANTHROPIC_BASE_URL); empty keeps the CLI's default.
  base_url: ""
  # NAME of the environment variable that holds the API key. Never put the
  # key itself here: this file is committed.
  api_key_env: ANTHROPIC_API_KEY
  # NAME of the environment variable that holds a subscription (Pro/Max)
  # token from "claude setup-token". Used when no API key is set: an API
  # key wins when both are.
  oauth_token_env: CLAUDE_CODE_OAUTH_TOKEN

# Models: an alias (haiku, sonnet, opus) or a full model id.
# A task's own "model" in the task graph wins.
models:
  implement: sonnet   # the model of tasks that write code
  simple: haiku       # tasks that own no file or only docs (*.md, *.txt, docs/**); empty: implement
  fallback: ""        # model to switch to when the main one is overloaded; empty: none
  plan: ""            # zerg plan's session; empty: implement
  design: ""          # zerg design's sessions; empty: implement
  review: ""          # zerg review's session; empty: implement

# Spending limits; 0 means no limit (and no question). docs/cost.md
budget:
  task_usd: 3     # USD per task attempt (claude --max-budget-usd)
  max_turns: 50   # agent turns per attempt (claude --max-turns)
  run_usd: 0      # no attempt starts once spent + projected in flight + the next would pass it
  on_exceed: finish               # when run_usd stops launches, running attempts: finish | cancel
  confirm_above_usd: 25           # zerg rush asks (y/N) when the projection's high figure is above this; --yes skips
  max_workers_without_confirm: 16 # ... and when more workers than this would run at once

retry:
  task_retries: 2               # retries of a task that failed on its own (verification, ownership, ...)
  infra_backoff_initial: 5s     # first wait after an infra failure (rate limit, 5xx, stall, crash)
  infra_backoff_max: 5m         # the wait doubles up to this
  infra_max_attempts: 8         # infra attempts per task before it fails; these do not use task_retries
  wait_for_reset: false         # a usage limit with a reset time: wait for it and go on (zerg rush --wait-for-reset)
  wait_for_reset_max: 6h        # ... unless the reset is further ahead than this (the run then ends resumable)

# Circuit breaker: after this many consecutive infra failures, no launches
# for the cooldown, then one probe.
breaker:
  failures: 5
  cooldown: 60s

# Failure rate over the last "window" attempts (once there are min_samples):
# from yellow, half the workers; from red, launches pause until a probe succeeds.
backpressure:
  window: 20
  min_samples: 5
  yellow: 0.2
  red: 0.5

heartbeat:
  # Kill and requeue a worker after this long without output. Below 300s
  # (300s or more is refused): the CLI's own stream watchdog fires then.
  stall_timeout: 120s

verification:
  # Timeout of a task's verification command when the task graph gives none.
  timeout: 10m

design:
  # zerg design: sessions at most, each later one told the previous task
  # graph's validation errors (1-20).
  max_rounds: 3

# Quality gates run on the merged integration head after each level; a
# failing required gate blocks the merge. Example:
#   gates:
#     - name: test
#       command: go test ./...
#       timeout: 10m      # default 10m
#       required: true    # default true; false only reports
#       when: every_level # default; last_level: only the merge that completes the graph
gates: []

env:
  # Extra environment variables passed to workers, by NAME, on top of zerg's
  # allowlist (PATH, HOME, LANG, ...). Everything else is withheld.
  pass: []
  # Names in pass that zerg considers dangerous (LD_*, DYLD_*, NODE_OPTIONS,
  # BASH_ENV, GIT_*, SSH_AUTH_SOCK, IS_SANDBOX, cloud and VCS credentials, any
  # *TOKEN*/*SECRET*/*PASSWORD*) are refused unless repeated here; each
  # override is written to the audit log when a run starts.
  allow_dangerous: []

security:
  # Unprivileged account workers run as when zerg runs as root (created with
  # useradd --system when missing; in sandbox mode one per worker slot,
  # named <worker_user>-1, -2, ...). Never root.
  worker_user: zerg-worker
  # Globs a worker's commit may never touch whatever a task owns, on top of
  # zerg's own list (.git*, .zerg/, .claude/, CI configuration, hooks).
  protected_paths: []
  # Protected paths a task may change after all when its files name them,
  # e.g. .github/workflows/** for a task that writes CI. zerg review and
  # zerg merge put every such change before you. git's, zerg's and Claude
  # Code's own files (.git*, .zerg/, .claude/, .mcp.json) never open.
  allow_protected: []
  # A write the worker's hook refused (a file its task does not own):
  # report shows it with the result (status, report, --json, dashboard);
  # fail also fails the attempt, which is retried with the refusal in its prompt.
  refused_writes: report

# Whose name zerg's commits carry: the task commits, the merges on the
# integration branch and the merge on your branch.
commits:
  author: user      # user: your git user.name/user.email (zerg where unset), zerg as committer; zerg: zerg
  signoff: false    # add Signed-off-by: <author> (DCO)
  sign: false       # sign them with your git signing setup (an agent or a key without passphrase); you are then the committer too

# Sandbox and container mode: hosts a worker may reach besides the model API ("host",
# "host:port" or "*.example.com"). Empty: no network at all.
egress:
  allow: []

# Sandbox and container mode: what a worker's requests to the model API may ask for. The
# model must be the task's or the fallback; budget.task_usd and
# budget.run_usd are enforced here too (docs/gateway.md).
gateway:
  max_tokens: 0       # cap on a request's max_tokens; 0: what the CLI asks for (zerg's launch probe measures it)
  betas: []           # anthropic-beta features allowed besides the ones zerg has reviewed (docs/gateway.md)
  strict: false       # true: refuse every beta, body field and content block zerg has not reviewed, even the CLI's own
  server_tools: []    # web_search, web_fetch, code_execution, mcp: tools the API runs; their hosts must be in egress.allow

# Sandbox and container mode: limits of each sandboxed command or container (0: no limit).
sandbox:
  memory_mb: 4096          # memory of all its processes together (a cgroup, where the machine has one) and of each
  processes: 1024          # its processes together (a cgroup) and those of the worker's user
  cpu_seconds: 3600        # CPU time of each process
  file_size_mb: 1024       # largest file a process may write
  open_files: 4096         # open files of each process
  max_commit_file_mb: 10   # largest file zerg commits from a worker

# Container mode: the engine and the image of the workers' containers; their
# limits are sandbox.* (docs/container.md).
container:
  runtime: auto   # auto (podman, then docker), podman or docker
  image: ""       # an image the engine has; empty: the repository's devcontainer

# Tasks mode: how long a handed-out task waits for zerg tasks done before it
# is handed out again (docs/modes.md).
tasks:
  lease: 30m

# Cluster mode: send the attempts to zerg agents on other machines
# (docs/cluster.md). mode above stays the isolation each attempt needs.
cluster:
  url: ""              # tls://HOST:PORT agents dial; empty: run attempts here
  embed: false         # run the server in the coordinator (TLS, store in .zerg/runs/.cluster)
  listen: 0.0.0.0:4222 # where the embedded server listens
  creds: ""            # the coordinator's credentials for a server it does not embed
  ack_wait: 1m         # an agent silent this long loses its attempt to another
  max_deliver: 5       # deliveries of one attempt before it fails as infra
  agent_key: coordinator # whose API key agents' workers use: coordinator (through it) or local (the agent host's)

# The disk zerg's records and the workspaces live on.
disk:
  min_free_mb: 1024    # no attempt starts below this much free space; a growing one is stopped
  workspace_mb: 4096   # what one attempt may write (workspace, home, config, scratch); 0: no limit

# Toolchains zerg finds from the repository's files (go.mod, package.json,
# pyproject.toml, Cargo.toml, mix.exs, Makefile, mise.toml): workers, their
# verification and the gates get their installs and the user's package
# caches read-only, and warm build caches of zerg's own (docs/toolchains.md).
toolchains:
  off: []     # detected toolchains to leave alone: go, node, python, rust, elixir, make, mise
  paths: []   # extra directories of programs, first on PATH (absolute)

caches:
  off: []         # caches to leave out: go-mod, go-build, npm, pip, uv, cargo
  read_only: []   # extra host directories visible read-only in sandbox mode (absolute)

# The hook's command policy (docs/security.md).
worker_policy:
  allow_commands: []   # subprocess mode: more programs a worker may run, with any arguments
  deny_commands: []    # both modes: programs a worker may never run

# Security rules given to workers, filtered by the languages of their files.
security_rules:
  enabled: true
  url: https://github.com/TikiTribe/claude-secure-coding-rules
  commit: f644d862f89f926537591d64439c067b1e066ffe   # a full commit id, never a branch
  sha256: ""   # expected checksum of the fetched rules; empty: not checked

context:
  # Tokens of each worker's context pack: its task, files, dependencies'
  # summaries, the spec sections most relevant to it and the security rules
  # of its languages (zerg context TASK shows it; docs/context.md).
  token_budget: 4000
`

# The README's two commands are `make demo` and `make test`. Everything they need
# is installed from here: Go modules by `go`, the pinned Claude Code CLI by npm,
# bubblewrap by apt-get when it is missing and we run as root.

GO        ?= go
CLAUDE_DIR := tools/claude
CLAUDE_BIN := $(CLAUDE_DIR)/node_modules/.bin/claude
ZERG      := bin/zerg

.PHONY: all build claude claude-matrix cli-matrix cli-compat bwrap tmux iproute2 podman chromium container-image ecosystems test test-unit vet fmt-check demo bench bench-rush bench-cluster bench-real bench-speedup chaos fuzz clean lint golangci-lint

all: build

# zerg --version prints what git describe says of this checkout (a tag, or the
# commit, "-dirty" with uncommitted changes), set at link time: GOFLAGS may
# turn off the build info's VCS stamping (-buildvcs=false), the link flag
# cannot be lost that way. Outside a git checkout the build info decides.
VERSION ?= $(shell git describe --tags --always --dirty --abbrev=12 2>/dev/null)

build:
	$(GO) build -ldflags '$(if $(VERSION),-X github.com/zergrush/zerg/internal/cli.Version=$(VERSION))' -o $(ZERG) ./cmd/zerg

# The pinned real CLI (exact version and lockfile in tools/claude), installed
# locally; no global install. Tests find it through this path. It is the
# newest release of zerg's supported range (docs/claude-code.md).
claude: $(CLAUDE_BIN)

$(CLAUDE_BIN): $(CLAUDE_DIR)/package.json $(CLAUDE_DIR)/package-lock.json
	cd $(CLAUDE_DIR) && npm ci --no-audit --no-fund --loglevel=error
	@$(CLAUDE_BIN) --version
	@touch $@

# The other releases of the supported range, each an exact version with its
# lockfile in tools/claude-compat/<version> (the oldest supported and one
# between); make test runs the CLI contract suite against each.
CLI_MATRIX := $(sort $(notdir $(wildcard tools/claude-compat/*)))
CLI_MATRIX_BINS := $(foreach v,$(CLI_MATRIX),tools/claude-compat/$(v)/node_modules/.bin/claude)
claude-matrix: $(CLI_MATRIX_BINS)

tools/claude-compat/%/node_modules/.bin/claude: tools/claude-compat/%/package.json tools/claude-compat/%/package-lock.json
	cd tools/claude-compat/$* && npm ci --no-audit --no-fund --loglevel=error
	@$@ --version
	@touch $@

# The CLI contract suite: the tests of what zerg assumes of Claude Code
# (docs/claude-code.md): the driver's stream reading, settings, hooks and
# permission rules (e2e/claude, e2e/mockapi), subscription sign-in, the
# gateway's replay of the real tool-call corpus with zero refusals, the
# launch check, the demo, the sandbox red team (e2e/rush), tasks mode's hook
# (e2e/journey) and doctor (e2e). ZERG_CLAUDE names the release; the e2e
# suites use it.
CLI_CONTRACT := ^(TestE2E.*|TestRealCLI.*|TestClaude[A-Z].*|TestGatewayRefusesNothingRealWorkersSend|TestSubscriptionToken|TestLaunchCheck.*|TestRushDeliversDemo|TestRushDeliversWithAnUnseenBeta|TestTasksModeThroughClaude|TestDoctorReal|TestRedTeamSandbox)$$
CLI_CONTRACT_PKGS := ./e2e/claude ./e2e/mockapi ./e2e/rush ./e2e/journey ./e2e
cli-contract = ZERG_CLAUDE=$(abspath $(1)) $(GO) test -count=1 -timeout 30m -run '$(CLI_CONTRACT)' $(CLI_CONTRACT_PKGS)

# The contract suite against every release of the matrix (make test runs the
# pinned one with everything else).
cli-matrix: claude-matrix bwrap
	@for v in $(CLI_MATRIX); do \
	  echo "== the CLI contract suite on Claude Code $$v"; \
	  $(call cli-contract,tools/claude-compat/$$v/node_modules/.bin/claude) || exit 1; \
	done

# make cli-compat VERSION=x.y.z: the contract suite against any release,
# installed from npm with that exact version and a lockfile (in
# tools/claude-compat/x.y.z when it is one of the matrix, else under
# $TMPDIR/zerg-cli-compat), after a report of what it does differently from
# the pinned one: betas, body fields, model ids and max_tokens, stream
# events, hook input, settings keys, flags, platform packages.
CLI_COMPAT_DIR = $(if $(wildcard tools/claude-compat/$(VERSION)/package.json),tools/claude-compat/$(VERSION),$${TMPDIR:-/tmp}/zerg-cli-compat/$(VERSION))
cli-compat: claude bwrap
	@[ "$(origin VERSION)" = "command line" ] || { echo "cli-compat: give the release: make cli-compat VERSION=2.1.332"; exit 2; }
	@d=$(CLI_COMPAT_DIR); mkdir -p "$$d" && cd "$$d" && \
	if [ ! -f package-lock.json ]; then \
	  printf '{"name":"zerg-claude-compat","private":true,"dependencies":{"@anthropic-ai/claude-code":"%s"}}\n' "$(VERSION)" > package.json && \
	  npm install --package-lock-only --no-audit --no-fund --loglevel=error; \
	fi && npm ci --no-audit --no-fund --loglevel=error
	@d=$(CLI_COMPAT_DIR); rc=0; \
	$(GO) run ./tools/clidrift -cli "$$d/node_modules/.bin/claude" -against $(CLAUDE_BIN) || rc=1; \
	echo "== the CLI contract suite on Claude Code $(VERSION)"; \
	ZERG_CLAUDE="$$(cd "$$d" && pwd)/node_modules/.bin/claude" $(GO) test -count=1 -timeout 30m -run '$(CLI_CONTRACT)' $(CLI_CONTRACT_PKGS) || rc=1; \
	exit $$rc

# Sandbox mode, the default, needs bubblewrap (0.8 or later). Installed when
# missing and we can (root, apt-get); otherwise one line says what to run.
bwrap:
	@command -v bwrap >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "== apt-get install bubblewrap"; \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null 2>&1 || \
	    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap; }; \
	  else \
	    echo "bubblewrap (bwrap) is missing; zerg's sandbox mode needs it: sudo apt-get install bubblewrap (Fedora: sudo dnf install bubblewrap)"; \
	    exit 1; \
	  fi; }

# The live view's end-to-end tests (e2e/rush/tui_test.go) drive the real
# binary in a tmux pane, a real terminal. Installed when missing and we can
# (root, apt-get), like bwrap.
tmux:
	@command -v tmux >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "== apt-get install tmux"; \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux >/dev/null 2>&1 || \
	    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux; }; \
	  else \
	    echo "tmux is missing; the live view's tests need it: sudo apt-get install tmux (Fedora: sudo dnf install tmux)"; \
	    exit 1; \
	  fi; }

# The cluster test puts the coordinator and each agent in a network
# namespace of its own joined by veth pairs (ip netns, iproute2).
iproute2:
	@command -v ip >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "== apt-get install iproute2"; \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq iproute2 >/dev/null 2>&1 || \
	    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq iproute2; }; \
	  else \
	    echo "ip is missing; the cluster test needs it: sudo apt-get install iproute2 (Fedora: sudo dnf install iproute)"; \
	    exit 1; \
	  fi; }

# Container mode needs an engine: podman (with runc, and uidmap and
# fuse-overlayfs for rootless use), and mmdebstrap builds the test image.
# Installed when missing and we can (root, apt-get), like bwrap.
PODMAN_PKGS := podman runc uidmap fuse-overlayfs mmdebstrap
podman:
	@missing=; \
	for c in podman runc newuidmap fuse-overlayfs mmdebstrap; do command -v $$c >/dev/null 2>&1 || missing=1; done; \
	[ -z "$$missing" ] || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "== apt-get install $(PODMAN_PKGS)"; \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(PODMAN_PKGS) >/dev/null 2>&1 || \
	    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(PODMAN_PKGS); }; \
	  else \
	    echo "podman is missing; zerg's container mode and its tests need it: sudo apt-get install $(PODMAN_PKGS)"; \
	    exit 1; \
	  fi; }

# The dashboard's browser tests (e2e/dashboard) drive headless Chromium,
# the Debian package. Installed when missing and we can (root, apt-get),
# like bwrap; make test then requires it (ZERG_E2E_BROWSER=required).
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "== apt-get install chromium"; \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null 2>&1 || \
	    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; }; \
	  else \
	    echo "chromium is missing; the dashboard's browser tests need it: sudo apt-get install chromium"; \
	    exit 1; \
	  fi; }

# The ecosystem tests (e2e/ecosystems) run real toolchains in the sandbox:
# pytest from Debian's python3-pytest (for /usr/bin/python3), cargo (the
# machine's, offline), node's test runner, and tsc with @types/node from the
# npm cache, where this puts them (an offline install of the test project's
# lockfile in a scratch directory), as a user's npm ci would.
ECOSYSTEMS_TS := e2e/ecosystems/testdata/typescript
ecosystems:
	@/usr/bin/python3 -c 'import pytest' >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "== apt-get install python3-pytest"; \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-pytest >/dev/null 2>&1 || \
	    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-pytest; }; \
	  else \
	    echo "pytest is missing for /usr/bin/python3; the ecosystem tests need it: sudo apt-get install python3-pytest"; \
	    exit 1; \
	  fi; }
	@tmp=$$(mktemp -d) && cp $(ECOSYSTEMS_TS)/package.json $(ECOSYSTEMS_TS)/package-lock.json $$tmp/ && \
	  { (cd $$tmp && npm ci --offline --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null 2>&1) || \
	    (cd $$tmp && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error); }; rc=$$?; rm -rf $$tmp; exit $$rc

# The image container mode's end-to-end tests run workers in
# (localhost/zerg-test:bookworm), built from Debian packages only; skipped
# when the engine has it with the same recipe (scripts/container-image.sh).
container-image: podman
	./scripts/container-image.sh

# The suites of e2e/rush that run a second time in container mode: the
# rush, resilience and state suites, the launch check and the sandbox red
# team.
CONTAINER_SUITE_FILES := $(addprefix e2e/rush/,rush_test.go resilience_test.go state_test.go launchcheck_test.go redteam_sandbox_test.go)
CONTAINER_SUITES := $(shell sed -n 's/^func \(Test[A-Za-z0-9_]*\).t \*testing\.T.*/\1/p' $(CONTAINER_SUITE_FILES) | paste -sd"|" -)

# The README's test command: formatting, vet, lint, and every test of both tiers
# (docs/testing.md), then the CLI contract suite against the other releases
# of the supported range (cli-matrix): ./... takes in the unit tier (internal/) and every
# end-to-end package under e2e/. e2e/rush runs dozens of real rushes, in
# parallel where they share nothing: go test's default 10 minutes per
# package is too close for it. Container mode's tests need podman and the
# test image, and fail (not skip) without them here; then the isolated
# suites of e2e/rush run again in containers. The dashboard's browser tests
# need Chromium and fail (not skip) without it here too.
test: claude claude-matrix bwrap tmux iproute2 chromium strace container-image ecosystems fmt-check vet lint cross
	ZERG_E2E_CONTAINER=required ZERG_E2E_BROWSER=required $(GO) test -count=1 -timeout 50m ./...
	ZERG_E2E_ISOLATION=container $(GO) test -count=1 -timeout 30m -run '^($(CONTAINER_SUITES))$$' ./e2e/rush/
	$(GO) test -count=1 -race ./internal/run/ ./internal/eventlog/
	$(MAKE) --no-print-directory test-portable go-install-check cli-matrix

# ---- Platforms and releases (docs/macos.md) ----------------------------------
# zerg runs where the Claude Code CLI does: macOS and Linux, arm64 and x86-64.
# make test builds zerg for each, vets for macOS and arm64, and compiles and
# links (without running) every test package for macOS, so that a Linux-only
# call outside a build constraint fails here and not on a Mac. Then the
# suites that kill, reap and resume run once more on internal/proc's portable
# paths (ZERG_PORTABLE_PROC=1: no pidfd, parent-death signal or subreaper) in
# subprocess mode, which is what macOS runs; and go install of this commit
# from an empty module cache, offline.
PLATFORMS := darwin/arm64 darwin/amd64 linux/amd64 linux/arm64
# The release build: static, no local paths. cross builds with the same
# flags, so make dist and the install check find its compiled packages.
RELEASE_GOFLAGS := -trimpath
RELEASE_ENV     := CGO_ENABLED=0 GOFLAGS=$(RELEASE_GOFLAGS)
DIST      ?= dist
PORTABLE_RUSH_SUITES  := TestRushDeliversDemo|TestKillCoordinatorAndResume|TestDeadCoordinatorIsSeenAndItsWorkersReaped|TestStopThenResume|TestResumeTakesGraphEditsAndKeepsUserCommits|TestChaos
PORTABLE_CLAUDE_SUITES := TestE2EStopLeavesNoProcess|TestE2EKillWorkerTreeAsWorkerUser

.PHONY: cross test-portable go-install-check dist strace

cross:
	@set -e; for p in $(PLATFORMS); do \
	  echo "== go build $$p"; \
	  GOOS=$${p%/*} GOARCH=$${p#*/} $(RELEASE_ENV) $(GO) build -o /dev/null ./cmd/zerg; \
	done
	GOOS=darwin GOARCH=arm64 $(GO) vet ./...
	GOOS=darwin GOARCH=amd64 $(GO) vet ./...
	GOOS=linux GOARCH=arm64 $(GO) vet ./...
	@echo "== go test -exec /bin/true ./... for darwin/arm64: every test package compiled and linked, none run"
	@out=$$(GOOS=darwin GOARCH=arm64 $(GO) test -count=1 -vet=off -exec /bin/true ./... 2>&1) || { echo "$$out" | grep -v '^ok '; exit 1; }

# The portable paths with real workers: crash (kill -9), stop, reap and
# resume, in subprocess mode; strace counts the system calls of zerg stop.
test-portable: claude strace
	ZERG_PORTABLE_PROC=1 ZERG_E2E_ISOLATION=subprocess $(GO) test -count=1 -timeout 30m -run '^($(PORTABLE_RUSH_SUITES))$$' ./e2e/rush/
	ZERG_PORTABLE_PROC=1 $(GO) test -count=1 -timeout 10m -run '^($(PORTABLE_CLAUDE_SUITES))$$' ./e2e/claude/

go-install-check:
	$(RELEASE_ENV) ./scripts/go-install-check.sh

# Release archives: zerg_VERSION_OS_ARCH.tar.gz for each platform (the
# binary, with --version printing VERSION, and the README), and SHA256SUMS.
# VERSION is git describe's unless given. Only what make dist writes is
# replaced in DIST; nothing else there is removed.
dist:
	@[ -n "$(VERSION)" ] || { echo "make dist: no version: build from a git checkout or give VERSION=..."; exit 2; }
	@case "$(VERSION)" in *[!A-Za-z0-9._+-]*) echo "make dist: VERSION=$(VERSION) has characters an archive name should not"; exit 2;; esac
	mkdir -p $(DIST) && rm -f $(DIST)/zerg_*.tar.gz $(DIST)/SHA256SUMS
	@set -e; for p in $(PLATFORMS); do \
	  name=zerg_$(VERSION)_$${p%/*}_$${p#*/}; \
	  echo "== $$name.tar.gz"; \
	  mkdir -p $(DIST)/$$name; \
	  GOOS=$${p%/*} GOARCH=$${p#*/} $(RELEASE_ENV) $(GO) build \
	    -ldflags '-s -w -X github.com/zergrush/zerg/internal/cli.Version=$(VERSION)' -o $(DIST)/$$name/zerg ./cmd/zerg; \
	  cp README.md $(DIST)/$$name/; \
	  tar -C $(DIST) --sort=name --owner=0 --group=0 --numeric-owner --mtime='@0' -cf - $$name | gzip -n9 >$(DIST)/$$name.tar.gz; \
	  rm -rf $(DIST)/$$name; \
	done
	cd $(DIST) && sha256sum zerg_*.tar.gz >SHA256SUMS && cat SHA256SUMS

# strace counts the signalling system calls of zerg stop in e2e/rush
# (which of proc's paths it took), on both paths. Installed when missing
# and we can (root, apt-get), like bwrap.
strace:
	@command -v strace >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "== apt-get install strace"; \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq strace >/dev/null 2>&1 || \
	    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq strace; }; \
	  else \
	    echo "strace is missing; e2e/rush counts zerg stop's system calls with it: sudo apt-get install strace"; \
	    exit 1; \
	  fi; }

# Quick loop for development: the unit tier (docs/testing.md), fakes only;
# the real CLI, sandboxes and rushes are in e2e/, which make test runs.
test-unit:
	$(GO) test ./internal/...

vet:
	$(GO) vet ./...

# golangci-lint with .golangci.yml (docs/testing.md says which linters and
# why), for Linux and for macOS (GOOS=darwin: the darwin files and build
# constraints); both passes run even when the first fails. The pinned
# version is built from the Go module proxy into .cache/bin, not into
# go.mod (its dependencies are not zerg's) nor onto PATH, when it is
# missing or another version; then it is reused. GOFLAGS is emptied for
# the install: flags meant for zerg's build are not the tool's.
GOLANGCI_LINT_VERSION := 2.15.0
GOLANGCI_LINT := $(CURDIR)/.cache/bin/golangci-lint
golangci-lint:
	@[ "$$($(GOLANGCI_LINT) version --short 2>/dev/null)" = "$(GOLANGCI_LINT_VERSION)" ] || { \
	  echo "== go install golangci-lint v$(GOLANGCI_LINT_VERSION)"; \
	  GOBIN=$(CURDIR)/.cache/bin GOFLAGS= $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v$(GOLANGCI_LINT_VERSION); }

lint: golangci-lint
	@rc=0; \
	echo "== golangci-lint run ./... (linux)"; $(GOLANGCI_LINT) run ./... || rc=1; \
	echo "== golangci-lint run ./... (GOOS=darwin)"; GOOS=darwin $(GOLANGCI_LINT) run ./... || rc=1; \
	exit $$rc

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './tools/*')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# The README's demo command: runs offline on the bundled example project, with
# real workers, so it needs the pinned CLI as well as zerg itself (a fresh clone
# has neither).
demo: build claude bwrap
	./scripts/demo.sh

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./bench/...

# A larger chaos run than the one in make test: random SIGKILLs of workers and
# of the coordinator itself; prints kills, recoveries, extra attempts, wall time.
chaos: claude
	ZERG_CHAOS_TASKS=40 ZERG_CHAOS_COORDINATOR_KILLS=5 ZERG_CHAOS_WORKER_KILLS=10 \
		$(GO) test -count=1 -run 'TestChaos$$' -v ./e2e/rush

# Orchestration overhead with the real CLI and a scripted model (bench/rushbench).
bench-rush: claude
	$(GO) run ./bench/rushbench -tasks 50 -workers 1,4,8

# Cluster mode against local mode (bench/cluster, docs/cluster.md): 1 and 3
# agents on a graph of 24 tasks with scripted think time.
bench-cluster: claude
	$(GO) run ./bench/cluster -rounds 3

# Speed on real projects (bench/realproject, docs/benchmarks.md): a feature
# rushed on a real Go module and a real npm package, fetched at run time, with
# the scripted model, against the same commands by hand in a warm checkout.
# Both run even when the first does not deliver; the target fails if either did.
bench-real: claude
	@rc=0; \
	$(GO) run ./bench/realproject -lang go || rc=1; \
	$(GO) run ./bench/realproject -lang node || rc=1; \
	exit $$rc

# The A/B benchmark (bench/speedup, docs/benchmarks.md): zerg rush at 1, 2, 4
# and 8 workers against one claude -p session doing every task in order, the
# scripted model's think times and tokens drawn from measured Claude Code
# turns. About 30 minutes (-shapes 3x4 alone: 12); -quick takes 2.5.
bench-speedup: claude
	$(GO) run ./bench/speedup -report bench-speedup.md -plot bench-speedup.png

# Short fuzzing pass over the task-graph loader and validator.
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzLoad -fuzztime 30s ./internal/spec
	$(GO) test -run '^$$' -fuzz FuzzValidate -fuzztime 30s ./internal/spec

clean:
	rm -rf bin

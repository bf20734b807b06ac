"""Shared harness for the failure-diagnosis corpus.

Every sample is made the same way: a pristine copy of a real project is copied
to a fresh directory, one break is applied (a list of edit operations), the
command is run for real with stdout and stderr combined, and the result is
written as one JSON line. Nothing in an output is written by hand; the only
changes are (1) the scratch paths are replaced by /work/project and (2) outputs
over 12,000 characters keep their first 4,000 and last 8,000 characters joined
by a line "…".

A case may give `expect`, a regular expression that must occur in the output:
if it does not (or the exit code is 0 when a failure was wanted) the case is
reported and left out, so a label never rests on an output that does not show it.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import time

SCRATCH = os.environ.get("DIAG_SCRATCH", "/tmp/diagcorpus")
HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.dirname(HERE)

PATTERNS = """compile_error type_error undefined_symbol import_missing dependency_missing
syntax_error test_assertion test_panic test_timeout race_detected lint_failure format_failure
network_unavailable offline_cache_miss permission_denied disk_full out_of_memory
command_not_found toolchain_version env_var_missing terminal_dependent_output flaky_test
no_tests_ran check_cannot_fail empty_change ownership_violation protected_path secret_found
merge_conflict rate_limited api_unreachable auth_failed max_turns context_exhausted
worker_crash unknown""".split()

LIMIT, HEAD, TAIL = 12000, 4000, 8000


def sh(cmd, cwd=None, env=None, check=True):
    r = subprocess.run(cmd, shell=True, cwd=cwd, env=env, executable="/bin/bash",
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = r.stdout.decode("utf-8", "replace")
    if check and r.returncode != 0:
        raise RuntimeError(f"setup command failed ({r.returncode}): {cmd}\n{out}")
    return out


def base_env(**extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANTHROPIC_", "CLAUDE", "ZERG_"))}
    env.setdefault("HOME", "/root")
    env["PATH"] = "/root/.cargo/bin:/usr/local/go/bin:/root/go/bin:" + env.get("PATH", "/usr/bin:/bin")
    env.pop("NO_COLOR", None)
    env.pop("FORCE_COLOR", None)
    env["TERM"] = "xterm-256color"
    env["LANG"] = "C.UTF-8"
    env["LC_ALL"] = "C.UTF-8"
    for k, v in extra.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return env


def apply_op(work, op):
    if callable(op):
        op(work)
        return
    kind = op[0]
    if kind == "sub":
        _, path, old, new = op[:4]
        p = os.path.join(work, path)
        text = open(p, encoding="utf-8").read()
        if old not in text:
            raise RuntimeError(f"sub: {old!r} not in {path}")
        open(p, "w", encoding="utf-8").write(text.replace(old, new, op[4] if len(op) > 4 else 1))
    elif kind == "re":
        _, path, pat, new = op[:4]
        p = os.path.join(work, path)
        text = open(p, encoding="utf-8").read()
        text2, n = re.subn(pat, new, text, count=op[4] if len(op) > 4 else 1, flags=re.M)
        if n == 0:
            raise RuntimeError(f"re: {pat!r} not in {path}")
        open(p, "w", encoding="utf-8").write(text2)
    elif kind == "write":
        p = os.path.join(work, op[1])
        os.makedirs(os.path.dirname(p), exist_ok=True)
        open(p, "w", encoding="utf-8").write(op[2])
    elif kind == "append":
        p = os.path.join(work, op[1])
        open(p, "a", encoding="utf-8").write(op[2])
    elif kind == "rm":
        p = os.path.join(work, op[1])
        if os.path.isdir(p) and not os.path.islink(p):
            shutil.rmtree(p)
        else:
            os.remove(p)
    elif kind == "chmod":
        os.chmod(os.path.join(work, op[1]), op[2])
    elif kind == "sh":
        sh(op[1], cwd=work, env=base_env())
    else:
        raise ValueError(kind)


def truncate(out):
    if len(out) <= LIMIT:
        return out, False
    return out[:HEAD] + "\n…\n" + out[-TAIL:], True


class Corpus:
    def __init__(self, language, prefix=None):
        self.language = language
        self.prefix = prefix or {"javascript": "js", "python": "py", "rust": "rs"}.get(language, language)
        self.samples = []
        self.failed = []
        self.only = os.environ.get("ONLY")  # run only cases whose pattern contains this
        # BATCH=name runs only the cases of that batch and appends them to the
        # .jsonl, leaving every existing sample and id as it is (a case of the
        # batch already there keeps its id and gets the new output), so the
        # held-back split of the rest does not move.
        self.batch = os.environ.get("BATCH")

    def run(self, pattern, project, src, brk, ops, command, expect=None, env=None,
            timeout=300, allow_zero=False, link=(), subdir="", keep_raw=False, post=None,
            extra_paths=(), batch=None):
        """src: pristine project dir (copied) or None (work dir made empty).
        link: names inside src that are symlinked instead of copied (node_modules).
        """
        assert pattern in PATTERNS, pattern
        if self.only and pattern not in self.only.split(","):
            return
        if self.batch and batch != self.batch:
            return
        slug = re.sub(r"[^A-Za-z0-9]+", "-", project.split("/")[-1].split("@")[0]).strip("-").lower() or "p"
        if self.language == "go":  # some suites (pkg/errors) check that file paths contain the module path
            slug = project.split("@")[0]
        work = os.path.join(SCRATCH, "run", self.language, slug)
        if os.path.exists(work):
            sh(f"chattr -R -i {work} 2>/dev/null; chmod -R u+rwX {work} 2>/dev/null; true")
            shutil.rmtree(work)
        if src:
            ign = shutil.ignore_patterns(*link) if link else None
            shutil.copytree(src, work, symlinks=True, ignore=ign)
            for name in link:
                if os.path.exists(os.path.join(src, name)):
                    os.symlink(os.path.join(src, name), os.path.join(work, name))
        else:
            os.makedirs(work)
        try:
            for op in ops:
                apply_op(work, op)
        except Exception as e:  # noqa
            self.failed.append((pattern, brk, f"setup: {e}"))
            print(f"  SETUP FAIL {pattern}: {brk}: {e}", file=sys.stderr)
            return
        cwd = os.path.join(work, subdir)
        t0 = time.time()
        try:
            r = subprocess.run(command, shell=True, cwd=cwd, env=env or base_env(), executable="/bin/bash",
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout,
                               start_new_session=True)
            code, out = r.returncode, r.stdout.decode("utf-8", "replace")
        except subprocess.TimeoutExpired as e:
            self.failed.append((pattern, brk, "harness timeout"))
            print(f"  TIMEOUT {pattern}: {brk}", file=sys.stderr)
            return
        if post:
            post(work)
        if code < 0:  # killed by a signal: report it the way a shell would
            code = 128 - code
        out = self.normalize(out, work, src, extra_paths)
        ok = True
        why = ""
        for host in ("registry.npmjs.org", "proxy.golang.org", "sum.golang.org", "deb.debian.org", "npmjs.com"):
            if host in out:
                ok, why = False, f"output names the registry host {host}"
        if code == 0 and not allow_zero:
            ok, why = False, "exit 0"
        if expect and not re.search(expect, out, re.M):
            ok, why = False, f"expect {expect!r} not found"
        if not ok:
            self.failed.append((pattern, brk, why))
            print(f"  REJECT {pattern}: {brk}: {why} (exit {code})\n" +
                  "    | " + "\n    | ".join(out[-1500:].splitlines()), file=sys.stderr)
            return
        out2, cut = truncate(out)
        if cut:
            brk = brk + f" (output was {len(out)} chars: first 4000 and last 8000 kept)"
        self.samples.append({"id": None, "language": self.language, "pattern": pattern,
                             "project": project, "break": brk, "command": command, "exit": code,
                             "output": out2})
        print(f"  ok {pattern:24s} exit={code:<3d} {time.time()-t0:5.1f}s {brk[:70]}", file=sys.stderr)

    def normalize(self, out, work, src, extra_paths=()):
        reps = [work]
        if src:
            reps.append(os.path.realpath(src))
            reps.append(src)
        reps += list(extra_paths)
        for p in sorted(set(reps), key=len, reverse=True):
            out = out.replace(p, "/work/project")
        out = out.replace(SCRATCH, "/work/project")
        return out

    def write(self):
        path = os.path.join(CORPUS, f"{self.language}.jsonl")
        if self.batch:
            self.append(path)
            return
        if self.only and os.path.exists(path):
            # merge: keep other patterns' samples
            old = [json.loads(l) for l in open(path, encoding="utf-8") if l.strip()]
            keep = [s for s in old if s["pattern"] not in self.only.split(",")]
            self.samples = keep + self.samples
        for i, s in enumerate(self.samples, 1):
            s["id"] = f"{self.prefix}-{i:04d}"
        with open(path, "w", encoding="utf-8") as f:
            for s in self.samples:
                f.write(json.dumps(s, ensure_ascii=False) + "\n")
        print(f"{self.language}: wrote {len(self.samples)} samples to {path}; {len(self.failed)} rejected",
              file=sys.stderr)
        for f_ in self.failed:
            print("  rejected:", f_, file=sys.stderr)

    def append(self, path):
        """BATCH mode: existing samples stay (ids and all); a new sample of a
        case already there (same pattern, break and command) replaces its
        output under its id, the others get the next ids."""
        old = [json.loads(l) for l in open(path, encoding="utf-8") if l.strip()] if os.path.exists(path) else []
        key = lambda s: (s["pattern"], s["break"].split(" (output was ")[0], s["command"])
        where = {key(s): i for i, s in enumerate(old)}
        last = max([int(s["id"].rsplit("-", 1)[1]) for s in old] or [0])
        added = 0
        for s in self.samples:
            i = where.get(key(s))
            if i is not None:
                s["id"] = old[i]["id"]
                old[i] = s
                continue
            last += 1
            added += 1
            s["id"] = f"{self.prefix}-{last:04d}"
            old.append(s)
        with open(path, "w", encoding="utf-8") as f:
            for s in old:
                f.write(json.dumps(s, ensure_ascii=False) + "\n")
        print(f"{self.language}: batch {self.batch}: {added} added, {len(self.samples) - added} renewed in {path}; "
              f"{len(self.failed)} rejected", file=sys.stderr)
        for f_ in self.failed:
            print("  rejected:", f_, file=sys.stderr)

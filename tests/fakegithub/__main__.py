"""Run the fake GitHub as a process, for tests that drive benchgate (or action.yml's steps) in subprocesses.

    python -m fakegithub --port 0 --state state.json --dump out.json --port-file port.txt

(run with ``tests/`` on ``PYTHONPATH``). It prints ``fake GitHub listening on
http://127.0.0.1:PORT`` once it accepts requests, writes the port to
``--port-file`` if given, writes the whole state plus the request log and any
OpenAPI violations to ``--dump`` after every request, and stops on SIGTERM or
SIGINT. State, request log, violations and fault injection are also reachable
over HTTP: GET /_fake/state, GET /_fake/requests, GET /_fake/violations,
POST /_fake/faults (a JSON list of Fault fields).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from dataclasses import asdict
from pathlib import Path

from fakegithub.server import FakeGitHub
from fakegithub.state import State


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fakegithub", description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: pick a free one)")
    parser.add_argument("--state", type=Path, help="initial state (JSON, the format of GET /_fake/state)")
    parser.add_argument("--dump", type=Path, help="write state, requests and violations here after each request")
    parser.add_argument("--port-file", type=Path, help="write the chosen port here once listening")
    parser.add_argument("--token", help="require this token in the Authorization header")
    args = parser.parse_args(argv)

    state = State.from_json(json.loads(args.state.read_text())) if args.state else State()

    def dump(fake: FakeGitHub) -> None:
        if args.dump is None:
            return
        data = {
            "state": fake.state.to_json(),
            "requests": [asdict(request) for request in fake.requests],
            "violations": [str(violation) for violation in fake.violations],
        }
        temporary = args.dump.with_suffix(".tmp")
        temporary.write_text(json.dumps(data, indent=1))
        temporary.replace(args.dump)

    fake = FakeGitHub(state, token=args.token, on_change=dump).start(args.port)
    dump(fake)
    if args.port_file:
        args.port_file.write_text(str(fake.port))
    print(f"fake GitHub listening on {fake.url}", flush=True)
    stopped = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stopped.set())
    stopped.wait()
    fake.stop()
    return 1 if fake.violations else 0


if __name__ == "__main__":
    sys.exit(main())

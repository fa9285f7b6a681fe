"""Node's benchmark protocol as the parent reads it, per message, never per Node version.

What a process said and what it means: docs/formats.md, "Node's benchmark protocol".
"""

import csv
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from benchgate.results.jsformat import field_text, format_configuration

# In the parent's environment it makes every file run only its first configuration, in-process,
# without a config message. compare.js passes it on; benchgate removes it and says so.
RUN_FN_VARIABLE = "NODE_RUN_BENCHMARK_FN"
_NOTED_VARIABLES = {
    "NODE_BENCHMARK_FLAGS": "common.js adds these flags to every configuration child of both sides",
    "NODE_RUN_BENCHMARK_GROUPS": "common.js runs only these groups of the files that declare groups (byGroups)",
    "NODEJS_BENCHMARK_ZERO_ALLOWED": "benchmarks may report zero operations; such reports (rate 0) are refused",
}
MAX_WARNINGS = 200  # run.json stays small however often a harness repeats the same mistake
EMPTY_QUEUE_REASON = (
    "no configuration to run: the file exited 0 without a message (--set or its combinationFilter "
    "excluded every combination); nothing measured, as with compare.js"
)


@dataclass(frozen=True)
class Sample:
    """One report as the CSV gets it (time None: an empty field, ``warning`` says why)."""

    configuration: str
    rate: float | str
    time: float | str | None
    warning: str | None = None


@dataclass
class JobMessages:
    """Everything one benchmark process sent, checked message by message as compare.js reads it."""

    queue_lengths: list[int] = field(default_factory=list)
    reported: list[str] = field(default_factory=list)
    bad_reports: list[str] = field(default_factory=list)
    untyped_reports: int = 0
    messages: int = 0

    def read(self, message: dict) -> Sample | None:
        """The sample a message carries, or None (a config message, an invalid report, anything else)."""
        self.messages += 1
        kind = message.get("type")
        if kind == "config":
            if isinstance(message.get("queueLength"), int) and not isinstance(message["queueLength"], bool):
                self.queue_lengths.append(message["queueLength"])
            return None
        if kind != "report":
            if kind is None and {"conf", "rate", "time"} <= message.keys():
                self.untyped_reports += 1
            return None  # Node's own internal messages ({cmd: 'NODE_...'}) and anything else
        if not isinstance(message.get("conf"), dict):
            self.bad_reports.append(f"a report without a conf object ({str(message.get('conf'))[:40]!r})")
            return None
        configuration = format_configuration(message["conf"])
        rate, time = message.get("rate"), message.get("time")
        rate_text = field_text(rate)
        if rate_text is None or float(rate_text) <= 0:
            self.bad_reports.append(f"{configuration}: rate {rate!r} is not a finite positive number")
            return None
        self.reported.append(configuration)
        if field_text(time) is None:
            shown = "missing" if "time" not in message else repr(time)[:60]
            return Sample(configuration, rate, None, f"time {shown} is not a finite number; written as an empty field")
        return Sample(configuration, rate, time)

    def had_nothing_to_run(self, exit_status: int | None, stdout_tail: str) -> bool:
        """True for compare.js's "success with no rows": exit 0, no message, no output, or queueLength 0."""
        if exit_status != 0 or self.reported:
            return False
        silent = self.messages == 0 and not stdout_tail.strip()
        return silent or (self.queue_lengths == [0] and self.messages == 1)

    def failure_reason(
        self, exit_status: int | None, stdout_tail: str, timed_out_after: float | None = None
    ) -> str | None:
        """Why a process failed (timed out after ``timed_out_after`` seconds, crashed, or said too little), or None."""
        if timed_out_after is not None:
            return f"timed out after {timed_out_after:g} s"
        if exit_status:
            how = f"killed by signal {-exit_status}" if exit_status < 0 else f"exited with status {exit_status}"
            return f"crashed ({how})"
        if self.bad_reports:
            return "invalid report: " + "; ".join(self.bad_reports)[:900]
        if self.reported:
            if self.queue_lengths and len(self.reported) < self.queue_lengths[-1]:
                return f"reported {len(self.reported)} of {self.queue_lengths[-1]} configurations"
            return None
        if self.had_nothing_to_run(exit_status, stdout_tail):
            return None
        if self.untyped_reports:
            return (
                f"sent {self.untyped_reports} report(s) without type 'report': a harness from before Node v8 "
                "(2017), which benchgate does not read"
            )
        if self.messages == 0 and stdout_tail.strip():
            last = stdout_tail.strip().splitlines()[-1][:200]
            return f"reported nothing over IPC but wrote to stdout (a harness that prints its reports?): {last!r}"
        return "exited without reporting any sample"


def benchmark_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The environment for benchmark processes: the runner's, without ``NODE_RUN_BENCHMARK_FN``."""
    return {key: value for key, value in environ.items() if key != RUN_FN_VARIABLE}


def environment_notes(environ: Mapping[str, str]) -> list[str]:
    """Warnings about variables in the runner's environment that change what common.js runs."""
    notes = []
    if RUN_FN_VARIABLE in environ:
        notes.append(
            f"{RUN_FN_VARIABLE} is set in the environment; removed for the benchmarks (with it common.js runs "
            "only the first configuration of each file; compare.js would pass it on)"
        )
    for name, effect in _NOTED_VARIABLES.items():
        if name in environ:
            notes.append(f"{name}={environ[name][:200]!r} is set: {effect}")
    return notes


def add_warning(warnings: list[dict], message: str, *, filename=None, side=None, configuration=None) -> None:
    """Record a protocol warning once (repeats only count up), at most MAX_WARNINGS of them."""
    new = {"filename": filename, "side": side, "configuration": configuration, "message": message}
    for item in warnings:
        if all(item[key] == value for key, value in new.items()):
            item["count"] += 1
            return
    if len(warnings) < MAX_WARNINGS:
        warnings.append({**new, "count": 1})


def describe_warning(item: dict) -> str:
    """One line for stderr."""
    parts = (item.get("filename"), item.get("configuration"), item.get("side") and f"({item['side']})")
    where = " ".join(filter(None, parts))
    repeated = f" [{item['count']} times]" if item.get("count", 1) > 1 else ""
    return f"{where}: {item['message']}{repeated}" if where else f"{item['message']}{repeated}"


def unused_set_keys(set_args: Sequence[str], csv_path: Path) -> list[str]:
    """``--set`` keys (not compare.js's ``CPUSET``) no sample's configuration holds: common.js ignored them."""
    keys = list(dict.fromkeys(arg.partition("=")[0] for arg in set_args if not arg.startswith("CPUSET=")))
    if not keys or not csv_path.is_file():
        return []
    unseen = set(keys)
    with csv_path.open(encoding="utf-8", newline="") as handle:
        configurations = (row[2] for row in itertools.islice(csv.reader(handle), 1, None) if len(row) > 2)
        # read only until every key is seen: the rest of the file cannot change the answer
        while unseen and (text := next(configurations, None)) is not None:
            unseen -= {key for key in unseen if text.startswith(f"{key}=") or f" {key}=" in text}
    return [key for key in keys if key in unseen]

"""The bisect report: the culprit and the chain of probes with the evidence for each, as JSON-ready data
(``report_data``) and as markdown (the PR comment's table style) or text rendered from it with tabulate."""

import math
from collections.abc import Callable
from dataclasses import asdict

from tabulate import tabulate

from benchgate.bisect.search import Bisection, Done, culprits
from benchgate.report.markup import code, plain

REASONS = {
    "found": "found",
    "no-step": "no step between the ends (their intervals overlap at the most runs)",
    "end-failed": "an end could not be measured",
    "budget": "stopped by the budget (--max-probes or --max-hours) before every interval was narrowed",
}


# A probe's row in the JSON report: Placement's field of each.
_ROW_FIELDS = {"cls": "rows", "change": "change", "share": "position", "share_low": "low", "share_high": "high"}
HEADERS = ["#", "candidate", "like", "share of the step [interval]", "runs", "samples", "build", "seconds"]


def _pct(value: float) -> str:
    return "n/a" if not math.isfinite(value) else f"{value:+.1f} %"


def report_data(bisection: Bisection, done: Done, setup: dict) -> dict:
    """The report as plain data: what was bisected, why it stopped, the culprits and every probe."""
    step = bisection.step()
    probes = []
    for order, probe in enumerate(bisection.probes.values(), start=1):
        candidate = bisection.candidates[probe.index]
        entry = {
            "order": order,
            "index": probe.index,
            "key": candidate.key,
            "label": candidate.label,
            "runs": probe.runs,
            "batches": probe.batches,
            "samples": sum(len(rates) for rates in probe.samples.values()),
            "built": probe.built,
            "build_seconds": round(probe.build_seconds, 3),
            "measure_seconds": round(probe.measure_seconds, 3),
            "skipped": probe.failed,
        }
        if probe.failed is None and step.stepped and probe.runs:
            cls, share, settled = bisection.level_of(probe.index, step)
            entry.update(cls=cls, share=share, settled=settled)
            if probe.index not in bisection.ends:
                placement = bisection.placement(probe.index, step)
                entry["rows"] = {
                    row: {name: getattr(placement, field)[row] for name, field in _ROW_FIELDS.items()}
                    for row in placement.rows
                }
        probes.append(entry)
    found = []
    for culprit in culprits(bisection):
        first, last = bisection.candidates[culprit.first], bisection.candidates[culprit.last]
        found.append(
            {
                **asdict(last),  # its key, label, author and url
                "key": last.key if culprit.first == culprit.last else None,
                "range": [first.key, last.key],
                "commits": culprit.last - culprit.first + 1,
                "share": culprit.share,
                "skipped": [bisection.candidates[index].key for index in culprit.skipped],
                "resolved": culprit.resolved,
            }
        )
    return {
        "setup": setup,
        "reason": done.reason,
        "candidates": len(bisection.candidates),
        "step": {
            row: {"change": step.change[row], "low": step.low[row], "high": step.high[row]} for row in step.stepped
        },
        "culprits": found,
        "probes": probes,
        "probes_measured": len(probes),
        "builds": sum(probe["built"] for probe in probes),
        "elapsed_seconds": round(bisection.elapsed_seconds, 3),
    }


def _culprit_line(culprit: dict, markdown: bool) -> str:
    name = code if markdown else str
    share = f"{100 * culprit['share']:.0f} % of the step"
    if culprit["key"] is None:
        first, last = (name(key[:12]) for key in culprit["range"])
        what = f"one of {culprit['commits']} candidates {first}..{last}"
        if culprit["skipped"]:
            what += f" ({len(culprit['skipped'])} skipped: could not be measured)"
    else:
        short = culprit["key"][:12] if len(culprit["key"]) == 40 else culprit["key"]
        link = f"[{short}]({culprit['url']})" if markdown and culprit["url"] else name(short)
        what = f"{link} {name(culprit['label'])}"
        if culprit["author"]:
            what += f" by {name(culprit['author'])}"
    unresolved = "" if culprit["resolved"] else " (not narrowed further: budget)"
    return f"{what}: {share}{unresolved}"


def _probe_rows(data: dict, name: Callable[[str], str]) -> list[list[str]]:
    table = []
    for probe in data["probes"]:
        # A commit: its short SHA and subject; a release: its version.
        key = f"{probe['key'][:12]} {probe['label'][:50]}" if len(probe["key"]) == 40 else probe["label"]
        if probe["skipped"]:
            verdict, where = "skipped", name(probe["skipped"][:80])  # a build's or benchmark's output: untrusted
        elif "cls" not in probe:
            verdict, where = "-", ""
        else:
            verdict = probe["cls"] + ("" if probe["settled"] else " (undecided at its runs)")
            where = "end" if probe["index"] in (0, data["candidates"] - 1) else _share_text(probe)
        build, seconds = "built" if probe["built"] else "cached", probe["build_seconds"] + probe["measure_seconds"]
        table.append(
            [probe["order"], name(key), verdict, where, probe["runs"], probe["samples"], build, f"{seconds:.1f}"]
        )
    return table


def _share_text(probe: dict) -> str:
    """A probe's share of the step with its interval, and its mean change from the earlier end."""
    rows = probe.get("rows", {}).values()
    low = min((row["share_low"] for row in rows), default=probe["share"])
    high = max((row["share_high"] for row in rows), default=probe["share"])
    text = f"{100 * probe['share']:.0f} % [{100 * low:.0f}, {100 * high:.0f}]"
    return f"{text}, {_pct(sum(row['change'] for row in rows) / len(rows))} vs earlier" if rows else text


def render(data: dict, markdown: bool) -> str:
    """The report as markdown (``markdown``) or plain text."""
    span, prose = (code, plain) if markdown else (str, str)
    ends = f"{data['setup'].get('from')} .. {data['setup'].get('to')}"
    title = f"benchgate bisect: {span(ends)} ({data['candidates']} candidates)"
    lines = [f"## {title}" if markdown else title, ""]
    if data["culprits"]:
        lines.append("**Culprit:**" if markdown else "culprit:")
        lines += [f"- {_culprit_line(culprit, markdown)}" for culprit in data["culprits"]]
    else:
        lines.append(f"No culprit: {prose(REASONS[data['reason']])}.")
    if data["reason"] != "found" and data["culprits"]:
        lines.append(f"Stopped: {REASONS[data['reason']]}.")
    lines.append("")
    for row, change in data["step"].items():
        interval = f"[{_pct(change['low'])}, {_pct(change['high'])}]"
        lines.append(f"- step of {span(row)}: {_pct(change['change'])} {interval}")
    table = _probe_rows(data, (lambda text: code(text, in_table=True)) if markdown else str)
    lines += [
        "",
        f"{data['probes_measured']} probes, {data['builds']} builds, {data['elapsed_seconds']:.0f} s; "
        "each probe compared with both ends (share 0 %: like the earlier end, 100 %: like the later).",
        "",
        tabulate(table, HEADERS, tablefmt="pipe" if markdown else "simple"),
    ]
    return "\n".join(lines) + "\n"

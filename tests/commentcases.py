"""Deterministic report contexts for the comment goldens and the report tests (no statistics run needed)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from benchgate import config, stats
from benchgate.config import labels
from benchgate.report.comment import CommentContext
from benchgate.results.recordparts import FailureEntry, SkipEntry
from benchgate.results.runrecord import Binary, BuildFailure, RunSummary, SandboxUse
from benchgate.stats import analysis, gate, outcome

RUN_URL = "https://github.com/nodejs/node/actions/runs/42"

ROWS = [
    # filename, configuration, improvement %, raw p
    ("buffers/buffer-compare.js", "n=1000000 size=16386", -15.56, 1e-6),
    ("buffers/buffer-compare.js", "n=1000000 size=4096", -2.63, 0.09),
    ("buffers/buffer-concat.js", "n=800000 withTotalLength=0 pieceSize=1 pieces=16", 300.67, 1e-9),
    ("buffers/buffer-tojson.js", "len=256 n=10000", 482.81, 1e-8),
    ("streams/creation.js", "kind='transform' n=50000000", -7.59, 0.004),
    ("url/url-parse.js", 'type="a|b" n=100', 0.4, 0.6),
]


def comparisons(rows=ROWS) -> pd.DataFrame:
    """A comparison table with stats.COMPARISON_COLUMNS from fixed improvements and p-values."""
    improvement = np.array([row[2] for row in rows], dtype=float)
    p_value = np.array([row[3] for row in rows], dtype=float)
    accuracy = np.abs(improvement) / 4 + 1.0
    frame = pd.DataFrame(
        {
            "filename": [row[0] for row in rows],
            "configuration": [row[1] for row in rows],
            "n_base": 30,
            "n_head": 30,
            "mean_base": 1000.0,
            "mean_head": 1000.0 * (1 + improvement / 100),
            "improvement": improvement,
            "t_statistic": np.sign(improvement) * 5.0,
            "df": 57.0,
            "p_value": p_value,
            "p_adjusted": stats.holm_adjust(p_value),
            "confidence": stats.stars(p_value),
            "accuracy_1": accuracy,
            "accuracy_2": accuracy * 1.33,
            "accuracy_3": accuracy * 1.73,
            "incomplete": False,
        }
    )
    for column in stats.COMPARISON_COLUMNS:
        if column not in frame:  # flags the statistics add later (e.g. constant) are all false here
            frame[column] = False
    return frame[stats.COMPARISON_COLUMNS]


def decided(rows=ROWS) -> pd.DataFrame:
    """The gate's decisions for ``rows``, made up but consistent: a row is rejected (p <= 1e-6) exactly when its
    interval excludes 0; the others are unchanged when the interval rules out -10 %, else inconclusive."""
    records = []
    for _, _, improvement, p in rows:
        change = round(improvement * 0.98, 2)
        rejected = p <= 1e-6
        half = 1 + abs(improvement) / 8 if rejected else max(1 + abs(improvement) / 8, abs(change) * 1.3)
        low, high = round(change - half, 2), round(change + half, 2)
        if rejected:
            decision = "regression" if change < 0 else "improvement"
        else:
            decision = "unchanged" if low > -10 else "inconclusive"
        records.append(
            {
                "decision": decision,
                "change": change,
                "ci_low": low,
                "ci_high": high,
                "ci_level": 0.001 / max(len(rows), 1),
                "gate_p": p / 10,
                "mde": round(half * 0.9, 2),
                "resolution": -low,  # the one-sided bound is the interval's low end here
                "gated_at": 10.0,
                "runs_needed": 48.0 if decision == "inconclusive" else np.nan,
            }
        )
    return pd.DataFrame(records, columns=list(gate.DECISION_COLUMNS))


def run_summary(**changes) -> RunSummary:
    values = dict(
        base=Binary(sha="a" * 40, ref="main", version="v20.11.0"),
        head=Binary(sha="b" * 40, ref="refs/pull/123/head", version="v20.11.0", node_args=("--jitless",)),
        runs=30,
        environment=(("cpu", "AMD EPYC 7B13"), ("cores", "2"), ("governor", "performance")),
        warnings=(),
        shards=1,
        has_record=True,
    )
    values.update(changes)
    return RunSummary(**values)


def context(
    rows=ROWS,
    *,
    settings: config.Settings | None = None,
    decision: labels.LabelDecision | None = None,
    run: RunSummary | None = None,
) -> CommentContext:
    settings = settings or config.Settings()
    decision = decision or labels.LabelDecision()
    settings = config.resolve(base=settings, label_values=decision.values)
    run = run or run_summary()
    gated = analysis.decisions_table(comparisons(rows), settings.policy(), decided(rows))
    return CommentContext(
        gated=gated,
        settings=settings,
        outcome=outcome.decide(gated, run, accept_regression=settings.accept_regression),
        run=run,
        labels=decision,
        run_url=RUN_URL,
    )


def by_actor(adders: dict[str, str], writers: set[str]) -> labels.LabelDecision:
    return labels.decide(list(adders), config.Settings(), actor_of=adders.get, can_write=lambda user: user in writers)


def variants() -> dict[str, CommentContext]:
    """Every comment variant the goldens pin down."""
    passing = [row for row in ROWS if row[2] > -1]
    failing_run = run_summary(
        failures=(
            FailureEntry(
                filename="buffers/buffer-tojson.js",
                configuration="len=4096 n=10000",
                side="head",
                exit_status=134,
                reason="crashed",
                stderr_tail="FATAL ERROR: Reached heap limit\n``` injected fence\n"
                "@nodejs/tsc <script>alert(1)</script>",
            ),
            FailureEntry(
                filename="misc/startup.js",
                configuration="mode=process",
                side="both",
                exit_status=1,
                reason="exit status 1",
                stderr_tail="Error: x",
            ),
        ),
        skipped=(SkipEntry(filename="http/simple.js", reason="needs autocannon or wrk; neither is installed"),),
        warnings=("load average 2.31 is high for 2 cores", "frequency governor is powersave, not performance"),
    )
    undecided = [*passing, ROWS[4]]  # streams/creation.js: -7.4 % [-17.1, 2.2] still allows a 10 % regression
    return {
        "pass": context(passing),
        "fail": context(),
        "inconclusive": context(undecided),
        "accepted": context(
            decision=by_actor({"benchmark": "maintainer", "benchmark:accept-regression": "maintainer"}, {"maintainer"})
        ),
        "ignored-label": context(
            decision=by_actor(
                {
                    "benchmark:threshold=off": "drive-by",
                    "benchmark:runs=abc": "drive-by",
                    "benchmark:min-effect=5%": "drive-by",
                },
                {"maintainer"},
            )
        ),
        "failed-benchmarks": context(passing, run=failing_run),
        "head-does-not-build": context([], run=build_failure_run("head")),
        # --no-sandbox: a pull request's code ran unconfined; the comment says so above everything else.
        "unsandboxed": context(
            passing, run=run_summary(sandbox=SandboxUse(used=False, untrusted_head=True, reason="--no-sandbox"))
        ),
        "base-does-not-build": context([], run=build_failure_run("base")),
        # --pairing duet: base and head side by side, the gate decided on the pairs (benchgate.stats.paired).
        "duet": duet_context(context(run=run_summary(pairing="duet"))),
    }


def duet_context(ctx: CommentContext) -> CommentContext:
    """A context whose rows the paired test decided, as ``analysis.analyze`` marks a duet run's."""
    from benchgate.stats.paired import PAIRED_TEST

    ctx.gated["gate_test"] = PAIRED_TEST
    ctx.gated["gate_reason"] = ctx.gated["gate_reason"].str.replace("yuen_log", PAIRED_TEST)
    return ctx


BUILD_LOG_TAIL = (
    "$ sh -c 'make -j$(nproc)'\n"
    "src/node_main.c:8:3: error: expected expression before 'if'\n"
    "``` injected fence @nodejs/tsc <b>bold</b>\n"
    "make: *** [Makefile:12: out/Release/obj/node_main.o] Error 1"
)


def build_failure_run(side: str) -> RunSummary:
    """The summary of a ``run --repo`` whose ``side`` did not build (run.json's build_failure)."""
    failed = Binary(sha="c" * 40, ref="broken" if side == "head" else "main")
    built = {"head": Binary(sha="b" * 40, ref="refs/pull/123/head"), "base": Binary(sha="a" * 40, ref="main")}
    return run_summary(
        environment=(),
        **{side: failed, ("base" if side == "head" else "head"): built["base" if side == "head" else "head"]},
        complete=False,
        build_failure=BuildFailure(
            side=side, ref=failed.ref, sha=failed.sha, log_tail=BUILD_LOG_TAIL, infrastructure=side == "base"
        ),
    )


def many_rows(count: int) -> list[tuple[str, str, float, float]]:
    """``count`` rows: a few gating regressions, some improvements, mostly noise."""
    rows = []
    for index in range(count):
        if index % 97 == 0:
            rows.append((f"category{index % 7}/file{index}.js", f"n={index} size=1024 kind='x'", -20.0, 1e-12))
        elif index % 5 == 0:
            rows.append((f"category{index % 7}/file{index}.js", f"n={index} size=1024 kind='x'", 12.5, 1e-4))
        else:
            rows.append((f"category{index % 7}/file{index}.js", f"n={index} size=1024 kind='x'", 0.3, 0.5))
    return rows

"""`benchgate report RESULTS...`: analyse run directories, apply configuration and labels, post to the PR."""

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from benchgate import config
from benchgate.commands.analyze import write_charts
from benchgate.commands.history import comment_context
from benchgate.config import flags, labels
from benchgate.errors import InputError
from benchgate.github import actions_env, approval
from benchgate.report import tables
from benchgate.report.comment import GITHUB_COMMENT_LIMIT, NOTHING_TO_BENCHMARK, CommentContext, render_comment
from benchgate.report.markup import FORMATS
from benchgate.results import rundirs
from benchgate.results.csvfile import empty_samples
from benchgate.results.runrecord import RunSummary
from benchgate.stats import outcome
from benchgate.stats.analysis import Analysis, RunData, analyze

SUMMARY_CHARACTERS = 340_000  # a bar character is 3 bytes of UTF-8: this stays under the 1 MiB summary limit


@dataclass(frozen=True)
class ReportResult:
    """What ``report_results`` did; ``exit_status`` is the command's status."""

    exit_status: int
    verdict: str
    regressions: int
    comment: str
    comment_url: str | None = None
    posting_error: str | None = None


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("report", help="analyse run directories, apply config and labels, post to the PR")
    parser.add_argument("results", nargs="*", metavar="RESULTS", help="run directories, results CSVs, or globs")
    parser.add_argument("--config", dest="config_path", metavar="FILE", default=config.DEFAULT_CONFIG_PATH)
    flags.add_flags(parser, "report")
    parser.add_argument("--repository", help="owner/name (default $GITHUB_REPOSITORY)")
    parser.add_argument("--pr", type=int, help="pull request number (default from $GITHUB_EVENT_PATH)")
    parser.add_argument("--token", help="GitHub token (default $GITHUB_TOKEN; prefer the variable)")
    parser.add_argument("--api-url", help="GitHub API URL (default $GITHUB_API_URL or https://api.github.com)")
    parser.add_argument("--comment-author", metavar="LOGIN", help="the login a GitHub App token comments as")
    parser.add_argument("--head-sha", help="the approved head commit; results for another are refused")
    parser.add_argument("--label", dest="dry_run_labels", action="append", default=[], help="with --dry-run: as if")
    parser.add_argument("--report-path", type=Path, help="also write the full markdown report here")
    parser.add_argument("--plot", dest="plot_path", type=Path, metavar="FILE.svg", help="also draw the charts")
    parser.add_argument("--dry-run", action="store_true", help="print the comment instead of posting")
    parser.add_argument("--format", dest="output_format", default="text", choices=FORMATS)
    parser.add_argument("--retries", type=int, default=5, help="retries of a failing GitHub request (default 5)")
    parser.add_argument("--nothing-to-benchmark", action="store_true", help="no category to benchmark: say so")
    parser.add_argument("--benchmark-dir", type=Path, help="the base checkout's benchmark/, for the changed files")
    parser.set_defaults(handler=_handler)


def _handler(args: argparse.Namespace) -> int:
    given = {**vars(args), "options": flags.flag_values(args, "report")}
    return report_results(given.pop("results"), **given).exit_status


def report_results(results: Sequence[str], *, client=None, stdout=None, **request) -> ReportResult:
    """Analyse, gate, post or print; ``request``: the options' dests (``options``: the gate's, by config key)."""
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    options = argparse.Namespace(**{**vars(parser.parse_args(["report"])), "options": None, **request})
    stdout = stdout or sys.stdout
    settings = config.load_settings(options.config_path, options.options or {})
    head_sha = approval.approved_sha(options.head_sha)
    if options.plot_path is not None:  # a bad name stops before anything is read or posted
        from benchgate.report import plots  # only with --plot: it loads Jinja2 (write_charts)

        plots.chart_paths(options.plot_path)
    if not results and not options.nothing_to_benchmark:
        raise InputError("no RESULTS given (run directories, results CSVs or globs)")
    # A change touching no benchmarked area ran nothing (run.json, no results.csv): a pass, said briefly,
    # once the API's list of changed files confirms it (below): the run directory alone is not believed.
    nothing_run = rundirs.nothing_selected(list(results)) if results else RunSummary()
    empty = (RunData(empty_samples()), nothing_run)
    run_data, run = empty if nothing_run is not None else RunData.load(list(results))
    if results:
        approval.check_results_commit(run, head_sha)
    posting = approval.Posting() if options.dry_run else approval.connect(options, settings, head_sha, client)
    if options.dry_run:  # whoever runs the command locally is the authority for the labels they pass
        posting.labels = labels.decide(options.dry_run_labels, settings, actor_of=lambda _: "you", can_write=bool)
    settings = config.resolve(base=settings, label_values=posting.labels.values)
    problems = posting.unbenchmarked(settings, options.benchmark_dir) if nothing_run is not None else []
    nothing = nothing_run is not None and not problems
    analysis = analyze(run_data, settings.policy())
    result = outcome.decide(analysis.table, run, accept_regression=settings.accept_regression, problems=problems)
    charts = _charts(options.plot_path, analysis) if options.plot_path is not None else ()
    context = CommentContext(
        gated=analysis.table,
        settings=settings,
        outcome=result,
        run=run,
        labels=posting.labels,
        run_url=actions_env.workflow_run_url(),
        nothing_selected=nothing,
        charts=charts,
    )
    body = _publish_locally(context, analysis, options, stdout, nothing)
    if not options.dry_run and not posting.errors:
        posting.post(body, head_sha, result, run, nothing, stdout)
    status, posting_error = posting.failure_status(result.exit_status)  # a posting error turns a pass into 3 or 2
    actions_env.set_outputs(
        {
            "verdict": result.verdict,
            "regressions": result.gating_rows,
            "comment-url": posting.comment_url or "",
            "check-url": posting.check_url or "",
            "report-path": str(options.report_path) if options.report_path else "",
        }
    )
    return ReportResult(status, result.verdict, result.gating_rows, body, posting.comment_url, posting_error)


def _publish_locally(context: CommentContext, analysis: Analysis, options: argparse.Namespace, stdout, nothing) -> str:
    """The comment's body; the full report, summary, annotations and stdout first, so a failed post loses nothing."""
    body, full_report = render_comment(context), render_comment(context, limit=None)
    history_section = comment_context(context.settings, context.gated)  # '' unless a history store is configured
    if history_section and len(body) + len(history_section) + 2 <= GITHUB_COMMENT_LIMIT:
        body, full_report = f"{body}\n\n{history_section}", f"{full_report}\n\n{history_section}"
    if options.report_path is not None:
        options.report_path.parent.mkdir(parents=True, exist_ok=True)
        options.report_path.write_text(full_report, encoding="utf-8")
    actions_env.write_step_summary(render_comment(context, limit=SUMMARY_CHARACTERS))
    result, failing = context.outcome, context.gated[context.gated["gating"]]
    annotations = [f"{row.filename} {row.configuration}: {row.gate_reason}" for row in failing.itertuples()]
    annotations += result.problems[:1] if context.run.build_failure is not None else []
    annotations += [f"{f.filename} {f.configuration} failed on the head: {f.reason}" for f in result.head_failures]
    for message in annotations:
        actions_env.error_annotation(message, title="benchgate")
    with actions_env.commands_stopped(stdout):  # benchmark names are untrusted text
        if options.dry_run or nothing:
            stdout.write(body if options.dry_run else f"{NOTHING_TO_BENCHMARK}\n")
        else:  # the markdown report is the whole comment
            markdown = full_report if options.output_format == "markdown" else None
            stdout.write(markdown or tables.render(analysis, options.output_format, problems=result.problems))
    if not options.dry_run:
        stdout.write(f"verdict: {result.verdict}\n")
    stdout.flush()
    return body


def _charts(path: Path, analysis: Analysis) -> tuple[str, ...]:
    """Write the charts; the file names the comment links to, or () when nothing was drawn."""
    if not len(analysis.table):
        print("benchgate: no charts: nothing was compared", file=sys.stderr)
        return ()
    try:
        written = write_charts(path, analysis)
    except OSError:
        raise  # an unwritable --plot is the user's input, as an unwritable --report-path is (exit 2)
    except Exception as error:  # noqa: BLE001 - a chart is an extra: it must not cost the PR its verdict
        print(f"benchgate: warning: no charts: {type(error).__name__}: {error}", file=sys.stderr)
        return ()
    return tuple(file.name for file in written)

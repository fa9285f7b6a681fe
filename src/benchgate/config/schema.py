"""Every setting, declared once: its key, parser, default, flags, input, label and how it loosens the gate.

Plain frozen dataclasses, not pydantic: each parser already accepts every spelling users write and fails with
benchgate's one-line ``InputError``; a model would only wrap them (docs/cli.md lists the settings)."""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from benchgate.config import values
from benchgate.config.values import AUTO_RUNS, fail, parse_bool, parse_percent, parse_runs, parse_threshold
from benchgate.stats import defaults, gate

_STARS = ("*", "**", "***", "off")  # thresholds by strictness: a higher index fails fewer rows (looser)
GATE_COMMANDS = ("analyze", "run", "report")
RUN_COMMANDS = ("run", "authorize")
SELECT_COMMANDS = (*RUN_COMMANDS, "versions", "bisect")


@dataclass(frozen=True)
class Setting:
    """One setting; ``key`` is its spelling everywhere: file key, ``--flag``, action input, label."""

    key: str
    type: Any
    default: Any
    parse: Callable[[Any, str, str], Any]  # (value, where, key) -> the typed value, InputError when bad
    help: str
    file: bool = True  # a key of .github/benchgate.yml
    commands: tuple[str, ...] = ()  # the commands with a --key flag
    input: str | None = None  # the action input carrying it: None the key, "" none
    label: str | None = None  # an example label value; "" for a label without value; None: no label
    # (whether a label's value lets through a regression the settings without it catch, that in words)
    loosens: tuple[Callable[[Any, Any], bool], str] | None = None
    run: bool = False  # carried by authorize's run-settings to the token-less benchmark job
    metavar: str | None = None  # default: PCT for a percentage, N for a count, else the key in capitals

    attr: str = field(init=False)  # the Settings attribute: the key with _ for -

    def __post_init__(self) -> None:
        object.__setattr__(self, "attr", self.key.replace("-", "_"))
        if self.input is None:
            object.__setattr__(self, "input", self.key)

    @property
    def separator(self) -> str:
        """A list's separator as text: a repeatable flag, a comma-separated input (``set``: one per line); else ""."""
        return ("\n" if self.key == "set" else ",") if self.type == tuple[str, ...] else ""


def _fewer_runs(value: Any, settings: Any) -> bool:
    # auto may stop a file early: fewer runs than a fixed count would take where it settles.
    return value < settings.most_runs() if value != AUTO_RUNS else settings.runs != AUTO_RUNS


_NARROWER = (lambda value, s: True, "always (a narrower selection)")
_FILES = values.items_of(values.FILTER, "file-name filter")


def _selection(key: str, parse: Callable[[Any, str, str], Any], help: str, **more: Any) -> Setting:
    """A list setting of the benchmark job's selection (by default a flag of run, authorize, versions, bisect)."""
    return Setting(key, tuple[str, ...], (), parse, help, **{"commands": SELECT_COMMANDS, "run": True, **more})


SETTINGS: tuple[Setting, ...] = (
    Setting(
        "threshold",
        str,
        "***",
        parse_threshold,
        "significance a regression needs to fail the gate: * p<0.05, ** p<0.01, *** p<0.001, or off",
        commands=GATE_COMMANDS,
        label="**",
        loosens=(lambda value, s: _STARS.index(value) > _STARS.index(s.threshold), "fewer stars (or off)"),
    ),
    Setting(
        "correction",
        str,
        "holm",
        values.choice(*gate.CORRECTIONS),
        "multiple-comparison correction of the gate's p-values: holm or none",
        commands=GATE_COMMANDS,
    ),
    Setting(
        "min-effect",
        float,
        0.0,
        parse_percent,
        "smallest regression in percent that can fail the gate, e.g. 3%",
        commands=(*GATE_COMMANDS, "versions", "bisect"),
        label="3%",
        loosens=(lambda value, s: value > s.min_effect, "raising it"),
    ),
    Setting(
        "inconclusive-above",
        float,
        defaults.DEFAULT_INCONCLUSIVE_ABOVE,
        values.parse_above_zero,
        "with min-effect 0, a comparison is unchanged only when its bound rules out a regression this large",
        commands=(*GATE_COMMANDS, "versions"),
    ),
    Setting(
        "unchanged-confidence",
        float,
        gate.DEFAULT_UNCHANGED_CONFIDENCE,
        values.parse_confidence,
        "confidence in percent of the one-sided bound that calls a comparison unchanged",
        commands=GATE_COMMANDS,
        label="99",
        # A lower confidence calls more rows unchanged, a real regression among them more often.
        loosens=(lambda value, s: value < s.unchanged_confidence, "lowering it"),
    ),
    Setting(
        "max-resolution",
        float,
        defaults.DEFAULT_MAX_RESOLUTION,
        values.parse_above_zero,
        "the coarsest resolution a comparison too noisy for the target may still be gated at (percent)",
        commands=GATE_COMMANDS,
        label="30%",
        # A coarser ceiling passes rows that rule out only a larger regression.
        loosens=(lambda value, s: value > s.max_resolution, "raising it"),
    ),
    Setting(
        "runs",
        int | str,
        values.AUTO_RUNS,
        parse_runs,
        "samples per configuration and side, or auto: each comparison runs until it is decided",
        commands=(*RUN_COMMANDS, "versions"),
        label="60",
        run=True,
        loosens=(_fewer_runs, "fewer runs, or auto where a count is configured"),
        metavar="N|auto",
    ),
    Setting(
        "min-runs",
        int | None,
        None,
        parse_runs,
        f"with runs auto: the first look (default {defaults.AUTO_MIN_RUNS})",
        file=False,
        commands=("run", "versions"),
        run=True,
    ),
    Setting(
        "max-runs",
        int,
        100,
        parse_runs,
        f"the most runs a side: caps runs auto (at most {defaults.AUTO_MAX_RUNS}) and what a label may ask for",
        commands=("run", "versions"),
        run=True,
    ),
    _selection(
        "categories",
        values.items_of(values.CATEGORY, "benchmark category"),
        "benchmark categories (default: the ones the changed files map to, else all)",
        commands=("authorize",),
        label="url,buffers",
        loosens=_NARROWER,
    ),
    _selection(
        "filter", _FILES, "only benchmark files whose name contains one of these", label="tojson", loosens=_NARROWER
    ),
    _selection("exclude", _FILES, "leave out benchmark files whose name contains one of these"),
    _selection(
        "set",
        values.items_of(values.SET, "key=value benchmark option"),
        "benchmark options key=value (compare.js --set), one per line in an input",
        metavar="KEY=VALUE",
    ),
    Setting(
        "cpuset",
        str,
        "",
        values.text_of(values.CPUSET, "a CPU list such as 2-3 or 0,2"),
        "CPUs to pin benchmark processes to with taskset, e.g. 2-3",
        commands=SELECT_COMMANDS,
        run=True,
        metavar="CPUS",
    ),
    Setting(
        "shard",
        str,
        "",
        values.parse_shard,
        "run shard I/N of the selected files (matrix jobs)",
        commands=RUN_COMMANDS,
        run=True,
        metavar="I/N",
    ),
    Setting(
        "pairing",
        str,
        "sequential",
        values.choice("sequential", "duet"),
        "sequential, or duet: base and head start together on two disjoint CPU sets, gated on the pairs",
        commands=RUN_COMMANDS,
        run=True,
    ),
    Setting(
        "slots",
        int,
        1,
        values.parse_slots,
        "jobs (or duets) at once on disjoint CPU sets; files that start servers or workers run alone",
        commands=RUN_COMMANDS,
        run=True,
    ),
    Setting(
        "label-prefix",
        str,
        "benchmark",
        values.parse_prefix,
        "prefix of the PR labels, and the label that requests a run",
        commands=("report", "authorize"),
    ),
    Setting(
        "accept-regression",
        bool,
        False,
        parse_bool,
        "report the regression, but do not fail the check (only a PR label, only from writers)",
        file=False,
        label="",
        loosens=(lambda value, s: True, "always"),
        input="",
    ),
    # The file's own sections (their help is for the reader: no flag shows it).
    Setting("rules", tuple, (), values.parse_rules, "per-file threshold, min-effect, max-sigma or ignore", input=""),
    Setting("changed-files", str, "", values.parse_changed_files, "paths -> categories", input="changed-map", run=True),
    Setting("build", tuple, (), values.parse_build, "how base and head are built (configure-flags, ...)", run=True),
    Setting(
        "noisy", float | str | None, None, values.parse_noisy, "strict, or the noise budget {max-sigma: 8%}", input=""
    ),
    Setting("history", values.HistorySettings, values.HistorySettings(), values.parse_history, "the store", input=""),
)

BY_KEY = {setting.key: setting for setting in SETTINGS}
FILE_KEYS = tuple(setting.key for setting in SETTINGS if setting.file)
LABEL_KEYS = tuple(setting.key for setting in SETTINGS if setting.label is not None)
INPUTS = {setting.input: setting for setting in SETTINGS if setting.input}
OPTION_KEYS = tuple(setting.key for setting in INPUTS.values())  # a flag's or an input's


def parse_setting(key: Any, value: Any, *, where: str, keys: tuple[str, ...] = tuple(BY_KEY)) -> Any:
    """Validate one setting (``key`` as users spell it, one of ``keys``) and return its typed value."""
    setting = BY_KEY.get(key)
    if key not in keys and setting is not None and not setting.input:  # the file's own, or a label's alone
        raise fail(where, key, "can only be set " + ("in the configuration file" if setting.file else "by a PR label"))
    if key not in keys:
        close = str(key).replace("_", "-")
        hint = f" (did you mean {close!r}?)" if close in keys else f"; known keys: {', '.join(FILE_KEYS)}"
        raise fail(where, key, f"unknown key{hint}")
    return setting.parse(value, where, key)

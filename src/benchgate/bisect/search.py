"""What to measure next and what was found, from the measured probes alone (so a resume picks up where it stopped),
and where a probe's rows lie between the ends by the gate's test (``stats.yuenwelch``; docs/bisect.md)."""

import itertools
import math
from dataclasses import dataclass, field

import numpy as np

from benchgate.stats.yuenwelch import gate_statistics

EARLIER, LATER, BETWEEN, UNDECIDED = "earlier", "later", "between", "undecided"
DEFAULT_LEVEL = 0.01  # two-sided, per comparison, before Bonferroni over the stepped rows
DEFAULT_TOLERANCE = 1 / 3  # a probe is like an end when its share of the step is ruled out above a third
Samples = dict[str, list[float]]


def _arrays(rows: list[str], *sides: Samples) -> list[np.ndarray]:
    """NaN-padded ``(rows, n)`` arrays of each side's rates, rows in ``rows``' order (``rows`` is not empty)."""
    padded = (itertools.zip_longest(*(side.get(row) or [np.nan] for row in rows), fillvalue=np.nan) for side in sides)
    return [np.array(list(columns), dtype=float).T for columns in padded]


def _log_interval(base: np.ndarray, head: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The change of head vs base per row as a log ratio, with its two-sided interval at ``level``."""
    st = gate_statistics(base, head)
    low, high = st.interval(level)
    with np.errstate(invalid="ignore"):
        return st.delta, np.log1p(low / 100), np.log1p(high / 100)


def _by_row(rows: list[str], values: np.ndarray) -> dict[str, float]:
    return dict(zip(rows, map(float, values), strict=True))


def _percent(rows: list[str], log_ratios: np.ndarray) -> dict[str, float]:
    return _by_row(rows, 100 * np.expm1(log_ratios))


@dataclass(frozen=True)
class Step:
    """The step between the two ends: which rows moved, by how much (log ratio) and its interval."""

    stepped: tuple[str, ...]  # the rows measured at both ends whose interval excludes 0 by at least min_effect
    change: dict[str, float]  # percent, later vs earlier, per row
    low: dict[str, float]
    high: dict[str, float]
    log_step: dict[str, float]


def find_step(earlier: Samples, later: Samples, *, level: float = DEFAULT_LEVEL, min_effect: float = 0.0) -> Step:
    """The rows that changed between the ends (Bonferroni over the rows), with their changes in percent."""
    rows = sorted(set(earlier) & set(later))
    if not rows:
        return Step((), {}, {}, {}, {})
    base, head = _arrays(rows, earlier, later)
    delta, low, high = _log_interval(base, head, level / len(rows))
    moved = ((low > 0) | (high < 0)) & (np.abs(delta) >= np.log1p(min_effect / 100))
    return Step(
        stepped=tuple(row for row, keep in zip(rows, moved, strict=True) if keep),
        change=_percent(rows, delta),
        low=_percent(rows, low),
        high=_percent(rows, high),
        log_step=_by_row(rows, delta),
    )


@dataclass(frozen=True)
class Placement:
    """One probe against the ends: its class, and per stepped row its position and the interval of it."""

    cls: str
    rows: dict[str, str]  # row -> class
    position: dict[str, float]  # row -> share of the step reached (0 earlier, 1 later)
    low: dict[str, float]
    high: dict[str, float]
    change: dict[str, float]  # percent vs the earlier end

    @property
    def share(self) -> float:
        """The mean position over the stepped rows."""
        return float(np.mean(list(self.position.values()))) if self.position else float("nan")


def place(
    probe: Samples,
    earlier: Samples,
    later: Samples,
    step: Step,
    *,
    level: float = DEFAULT_LEVEL,
    tolerance: float = DEFAULT_TOLERANCE,
) -> Placement:
    """Class a probe's stepped rows against both ends; the probe is ``undecided`` when any row is,
    ``earlier``/``later`` when all rows are, else ``between`` (rows moving at different commits too)."""
    rows = list(step.stepped)
    if not rows:
        return Placement(UNDECIDED, {}, {}, {}, {}, {})
    first, last, probed = _arrays(rows, earlier, later, probe)
    each = level / (2 * len(rows))  # two comparisons per row
    from_first, low_first, high_first = _log_interval(first, probed, each)
    _, low_last, high_last = _log_interval(last, probed, each)
    size = np.array([step.log_step[row] for row in rows])
    allowed = tolerance * np.abs(size)
    differs_first = (low_first > 0) | (high_first < 0)
    differs_last = (low_last > 0) | (high_last < 0)
    like_first = (low_first > -allowed) & (high_first < allowed)
    like_last = (low_last > -allowed) & (high_last < allowed)
    classes = np.where(
        differs_first & differs_last,
        BETWEEN,
        np.where(like_first & ~differs_first, EARLIER, np.where(like_last & ~differs_last, LATER, UNDECIDED)),
    )
    kinds = set(classes.tolist())
    cls = UNDECIDED if UNDECIDED in kinds else kinds.pop() if len(kinds) == 1 else BETWEEN
    ends = np.sort(np.stack([low_first / size, high_first / size]), axis=0)
    return Placement(
        cls=cls,
        rows=dict(zip(rows, classes.tolist(), strict=True)),
        position=_by_row(rows, from_first / size),
        low=_by_row(rows, ends[0]),
        high=_by_row(rows, ends[1]),
        change=_percent(rows, from_first),
    )


@dataclass(frozen=True)
class Candidate:
    """One point of the ordered history: a commit (key = sha) or a release (key = version)."""

    key: str
    label: str  # the commit's subject, or "v20.0.0"
    author: str = ""
    url: str = ""


@dataclass
class Probe:
    """What was measured at one candidate: the rates of every row, and what it cost."""

    index: int
    samples: Samples = field(default_factory=dict)
    runs: int = 0  # runs asked for so far (each batch adds its runs)
    batches: int = 0
    built: bool = False  # a build ran for it (False: the binary came from the cache or a release)
    build_seconds: float = 0.0
    measure_seconds: float = 0.0
    failed: str | None = None  # why it was skipped: does not build, crashed


@dataclass(frozen=True)
class Budget:
    """How long the bisection may go on, and how many runs a probe gets."""

    runs: int = 10  # the first batch of a probe, and each further batch of an undecided one
    max_runs: int = 40  # runs of one probe at most
    max_probes: int = 20
    max_hours: float = 24.0
    level: float = DEFAULT_LEVEL
    tolerance: float = DEFAULT_TOLERANCE
    min_effect: float = 0.0


@dataclass(frozen=True)
class Measure:
    """Measure ``runs`` more runs of candidate ``index``."""

    index: int
    runs: int


@dataclass(frozen=True)
class Done:
    """The bisection stopped: ``found``, ``no-step``, ``end-failed`` or ``budget``."""

    reason: str


@dataclass(frozen=True)
class Culprit:
    """A commit (``first == last``) or a range of them where the level moves, with its share of the step."""

    first: int
    last: int
    share: float  # of the step, 0..1 (mean over the stepped rows)
    skipped: tuple[int, ...] = ()  # candidates inside that could not be measured
    resolved: bool = True  # False: the budget ran out before the range was narrowed to one


@dataclass
class Bisection:
    """The candidates, the budget and the probes measured so far (the state a resume restores)."""

    candidates: list[Candidate]
    budget: Budget = field(default_factory=Budget)
    probes: dict[int, Probe] = field(default_factory=dict)
    elapsed_seconds: float = 0.0

    @property
    def ends(self) -> tuple[int, int]:
        return 0, len(self.candidates) - 1

    def step(self) -> Step:
        first, last = (self.probes.get(end, Probe(end)).samples for end in self.ends)
        return find_step(first, last, level=self.budget.level, min_effect=self.budget.min_effect)

    def placement(self, index: int, step: Step) -> Placement:
        probe, earlier, later = (self.probes[end].samples for end in (index, *self.ends))
        return place(probe, earlier, later, step, level=self.budget.level, tolerance=self.budget.tolerance)

    def level_of(self, index: int, step: Step) -> tuple[str, float, bool]:
        """A measured probe's class, position (0..1) and whether its runs settled it."""
        first, last = self.ends
        if index == first:
            return EARLIER, 0.0, True
        if index == last:
            return LATER, 1.0, True
        placement = self.placement(index, step)
        share, tolerance = placement.share, self.budget.tolerance
        if placement.cls != UNDECIDED:
            return placement.cls, share, True
        # Its runs are spent: classed by its point estimate (NaN, no stepped row: like the earlier end).
        nearest = (
            EARLIER if not np.isfinite(share) or share < tolerance else LATER if share > 1 - tolerance else BETWEEN
        )
        return nearest, share, False

    def measured(self) -> list[int]:
        return sorted(index for index, probe in self.probes.items() if probe.failed is None and probe.runs)


def _nearest_open(first: int, second: int, taken: set[int]) -> int | None:
    """The candidate strictly between ``first`` and ``second`` nearest the middle that is not yet probed."""
    middle = (first + second) // 2
    order = sorted(range(first + 1, second), key=lambda index: (abs(index - middle), index))
    return next((index for index in order if index not in taken), None)


def open_intervals(bisection: Bisection, step: Step) -> list[tuple[int, int]]:
    """Neighbouring measured probes whose levels differ (two between the ends: unless they are at the same level)."""
    points = bisection.measured()
    cls = {index: bisection.level_of(index, step)[0] for index in points}

    def differ(a: int, b: int) -> bool:
        if cls[a] == cls[b] == BETWEEN:  # two probes at one level unless some stepped row differs between them
            stepped = [
                {row: rates for row, rates in bisection.probes[index].samples.items() if row in step.stepped}
                for index in (a, b)
            ]
            return bool(find_step(*stepped, level=bisection.budget.level).stepped)
        return cls[a] != cls[b]

    return [(a, b) for a, b in zip(points, points[1:], strict=False) if differ(a, b)]


def next_action(bisection: Bisection) -> Measure | Done:
    """What to measure next, or why the bisection is done. Pure: decided from the probes alone."""
    budget = bisection.budget
    for end in bisection.ends:
        probe = bisection.probes.get(end)
        if probe is not None and probe.failed is not None:
            return Done("end-failed")
        if probe is None or probe.runs == 0:
            return Measure(end, budget.runs)
    over_time = bisection.elapsed_seconds >= budget.max_hours * 3600
    step = bisection.step()
    if not step.stepped:
        fewer = min(bisection.ends, key=lambda end: bisection.probes[end].runs)
        if bisection.probes[fewer].runs < budget.max_runs and not over_time:
            return Measure(fewer, min(budget.runs, budget.max_runs - bisection.probes[fewer].runs))
        return Done("no-step")
    if over_time:
        return Done("budget")
    for index in (index for index in bisection.measured() if index not in bisection.ends):
        probe = bisection.probes[index]
        if bisection.placement(index, step).cls == UNDECIDED and probe.runs < budget.max_runs:
            return Measure(index, min(budget.runs, budget.max_runs - probe.runs))
    taken = set(bisection.probes)
    for first, second in open_intervals(bisection, step):
        following = _nearest_open(first, second, taken)
        if following is not None:
            if len(bisection.probes) >= budget.max_probes:
                return Done("budget")
            return Measure(following, budget.runs)
    return Done("found")


def culprits(bisection: Bisection) -> list[Culprit]:
    """Every place the level moves: a commit, or a range where skipped or unprobed candidates remain."""
    step = bisection.step()
    if not step.stepped:
        return []
    taken, found = set(bisection.probes), []
    unmeasurable = {index for index, probe in bisection.probes.items() if probe.failed is not None}
    for first, second in open_intervals(bisection, step):
        share = bisection.level_of(second, step)[1] - bisection.level_of(first, step)[1]
        skipped = tuple(sorted(unmeasurable & set(range(first + 1, second))))
        found.append(Culprit(first + 1, second, share, skipped, _nearest_open(first, second, taken) is None))
    return found


def probes_left(bisection: Bisection) -> int:
    """An estimate of the probes still to come: a binary search of every open interval."""
    missing_ends = sum(bisection.probes.get(end) is None for end in bisection.ends)
    if missing_ends:
        return missing_ends + math.ceil(math.log2(max(len(bisection.candidates) - 1, 1)))
    step = bisection.step()
    if not step.stepped:
        return 0
    taken = set(bisection.probes)
    open_inside = (len(set(range(first + 1, second)) - taken) for first, second in open_intervals(bisection, step))
    left = sum(math.ceil(math.log2(inside + 1)) for inside in open_inside)
    return min(left, max(bisection.budget.max_probes - len(bisection.probes), 0))

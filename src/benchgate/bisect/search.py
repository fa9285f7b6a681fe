"""The search: what to measure next and what was found, decided from the measured probes alone (so a resumed
bisection picks up where it stopped). Candidate 0 is the earlier end, the last the later (docs/bisect.md)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from benchgate.bisect import classify
from benchgate.bisect.classify import BETWEEN, EARLIER, LATER, UNDECIDED, Placement, Samples, Step


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
    level: float = classify.DEFAULT_LEVEL
    tolerance: float = classify.DEFAULT_TOLERANCE
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

    def probe(self, index: int) -> Probe:
        return self.probes.setdefault(index, Probe(index))

    @property
    def ends(self) -> tuple[int, int]:
        return 0, len(self.candidates) - 1

    def step(self) -> Step:
        first, last = (self.probes.get(end, Probe(end)).samples for end in self.ends)
        return classify.find_step(first, last, level=self.budget.level, min_effect=self.budget.min_effect)

    def placement(self, index: int, step: Step) -> Placement:
        probe, earlier, later = (self.probes[end].samples for end in (index, *self.ends))
        return classify.place(probe, earlier, later, step, level=self.budget.level, tolerance=self.budget.tolerance)

    def level_of(self, index: int, step: Step) -> tuple[str, float, bool]:
        """A measured probe's class, position (0..1) and whether its runs settled it."""
        first, last = self.ends
        if index == first:
            return EARLIER, 0.0, True
        if index == last:
            return LATER, 1.0, True
        placement = self.placement(index, step)
        if placement.cls != UNDECIDED:
            return placement.cls, placement.share, True
        return classify.nearest(placement, self.budget.tolerance), placement.share, False

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
        if cls[a] == cls[b] == BETWEEN:
            samples = bisection.probes[a].samples, bisection.probes[b].samples
            return not classify.same_level(*samples, step, level=bisection.budget.level)
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

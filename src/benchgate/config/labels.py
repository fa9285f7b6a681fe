"""PR labels that steer a run (``benchmark:threshold=**``, ``benchmark`` alone requests one), and the trust
policy: a label that could let a regression through counts only from a writer (docs/cli.md, docs/security.md)."""

import functools
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from benchgate.config import schema
from benchgate.config import settings as config
from benchgate.errors import GitHubUnavailable, InputError

APPLIED, IGNORED, INVALID, REQUEST = "applied", "ignored", "invalid", "request"


@dataclass(frozen=True)
class LabelOutcome:
    """What became of one label, for the comment: applied, ignored (untrusted), invalid, or a run request."""

    label: str
    status: str
    reason: str
    actor: str | None = None
    key: str | None = None


@dataclass(frozen=True)
class LabelDecision:
    """The label values to apply on top of the settings, and an outcome for every label we recognised."""

    values: Mapping[str, Any] = field(default_factory=dict)
    outcomes: tuple[LabelOutcome, ...] = ()


@dataclass(frozen=True)
class ParsedLabel:
    label: str
    key: str | None  # None: the bare run-request label
    value: Any = None
    error: str | None = None


def parse_label(label: str, prefix: str) -> ParsedLabel | None:
    """Parse one label; None when it is not ours. Bad values come back with ``error`` set."""
    if label == prefix:
        return ParsedLabel(label, None)
    if not label.startswith(prefix + ":"):
        return None
    name, has_value, raw = (part.strip() for part in label[len(prefix) + 1 :].partition("="))
    setting = schema.BY_KEY.get(name)
    if setting is None or setting.label is None:
        known = ", ".join(key + ("=..." if schema.BY_KEY[key].label else "") for key in schema.LABEL_KEYS)
        return ParsedLabel(label, name or None, error=f"unknown setting {name!r}; known: {known}")
    if not setting.label and has_value:
        return ParsedLabel(label, name, error=f"'{name}' takes no value")
    if not setting.label:  # the label alone turns the setting on
        return ParsedLabel(label, name, True)
    if not raw:
        return ParsedLabel(label, name, error=f"'{name}' needs a value, e.g. {prefix}:{name}={setting.label}")
    try:
        value = schema.parse_setting(name, raw, where=f"label {label!r}")
    except InputError as error:
        # Keep only the reason: the comment already names the label.
        return ParsedLabel(label, name, error=error.message.split(": ", 1)[-1])
    return ParsedLabel(label, name, value)


def needs_trust(key: str, value: Any, settings: config.Settings) -> str | None:
    """Why this label value counts only from a writer (it loosens the gate, or costs runner time), or None."""
    rule = schema.BY_KEY[key].loosens  # could it let through a regression the settings without it catch?
    if rule and rule[0](value, settings):
        return "loosens the gate"
    if key == "runs" and value != config.AUTO_RUNS and value > (most := settings.most_runs()):
        configured = f"{most}, the most of auto" if settings.adaptive_runs() else settings.runs
        return f"asks for more runs than the configured {configured} (runner time)"
    return None


def decide(
    labels: Iterable[str],
    settings: config.Settings,
    *,
    actor_of: Callable[[str], str | None],
    can_write: Callable[[str], bool],
) -> LabelDecision:
    """Apply the trust policy to the PR's labels; ``actor_of(label)``: who added it last, ``can_write(user)``."""
    parsed = [item for item in (parse_label(label, settings.label_prefix) for label in labels) if item is not None]
    counts = Counter(item.key for item in parsed if item.key and item.error is None)

    @functools.cache
    def trusted(user: str) -> bool | None:
        try:
            return bool(can_write(user))
        except GitHubUnavailable:
            return None  # unknown: a label needing trust is ignored, never applied

    def judge(item: ParsedLabel) -> LabelOutcome:
        key, out = item.key, functools.partial(LabelOutcome, item.label, key=item.key)
        if key is None:
            return LabelOutcome(item.label, REQUEST, "requests a benchmark run")
        if item.error is not None:
            return out(INVALID, item.error)
        if counts[key] > 1:
            others = [other.label for other in parsed if other.key == key and other is not item]
            return out(INVALID, f"conflicts with {', '.join(others)}; remove all but one")
        if key == "runs" and item.value != config.AUTO_RUNS and item.value > settings.max_runs:
            return out(INVALID, f"asks for more than max-runs ({settings.max_runs}), the most a label may ask for")
        if (why := needs_trust(key, item.value, settings)) is None:
            return out(APPLIED, "tightens or keeps the gate")
        if (actor := actor_of(item.label)) is None:
            return out(IGNORED, f"{why}, and the issue events do not say who added it")
        allowed = trusted(actor)
        if allowed is None:
            return out(IGNORED, f"{why}, and @{actor}'s permission could not be checked (GitHub unreachable)", actor)
        if allowed:
            return out(APPLIED, f"added by @{actor}, who has write access", actor)
        return out(IGNORED, f"{why}, and @{actor} who added it lacks write, maintain or admin permission", actor)

    outcomes = tuple(judge(item) for item in parsed)  # in order: who added what is asked label by label
    values = {item.key: item.value for item, outcome in zip(parsed, outcomes, strict=True) if outcome.status == APPLIED}
    return LabelDecision(values, outcomes)


def label_adders(events: Iterable[Any]) -> dict[str, str]:
    """Map each label to the user who added it last, from issue events (objects with label/actor/event)."""
    adders: dict[str, str] = {}
    for event in events:
        if getattr(event, "event", None) == "labeled" and event.label and event.actor:
            adders[event.label] = event.actor
        elif getattr(event, "event", None) == "unlabeled" and event.label:
            adders.pop(event.label, None)
    return adders


def decide_with_client(
    client: Any, pr: int, labels: Iterable[str], settings: config.Settings, adders: Mapping[str, str] | None = None
) -> LabelDecision:
    """``decide`` with who-added-what (``adders``, else the issue events API) and the collaborator API's permissions."""
    labels = list(labels)
    if not any(parse_label(label, settings.label_prefix) for label in labels):
        return LabelDecision()
    try:
        adders = label_adders(client.label_events(pr)) if adders is None else adders
    except GitHubUnavailable:
        adders = {}
    return decide(labels, settings, actor_of=adders.get, can_write=client.can_write)

"""Text bars of the improvements, as node-benchmark-compare draws them: an axis symmetric around 0, set by the
largest |improvement|, so rows compare at a glance (``buffers/tojson.js n=1  |█████░  +43.09% ***``)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

FULL, EMPTY, AXIS = "█", "░", "|"


@dataclass(frozen=True)
class Bar:
    """One row of the chart: its label, improvement in percent (NaN when unknown) and compare.R's stars."""

    label: str
    improvement: float
    confidence: str = ""


def scale_for(improvements: Sequence[float]) -> float:
    """The half-range of the axis: the largest |improvement|, rounded up to 0.1 %, at least 0.1 %."""
    finite = [abs(value) for value in improvements if math.isfinite(value)]
    largest = max(finite, default=0.0)
    return max(math.ceil(largest * 10 - 1e-9) / 10, 0.1)


def render_bar(improvement: float, scale: float, half_width: int) -> str:
    """``half_width`` cells left of the axis, the axis, ``half_width`` cells right; filled towards the sign."""
    if not math.isfinite(improvement):
        return " " * half_width + AXIS + " " * half_width
    filled = min(half_width, round(abs(improvement) / scale * half_width))
    if improvement < 0:
        return EMPTY * (half_width - filled) + FULL * filled + AXIS + " " * half_width
    return " " * half_width + AXIS + FULL * filled + EMPTY * (half_width - filled)


def render_bars(bars: Sequence[Bar], *, half_width: int = 20, label_width: int | None = None) -> str:
    """The chart as lines of text (no trailing newline): an axis line, then one bar per row."""
    if not bars:
        return ""
    scale = scale_for([bar.improvement for bar in bars])
    width = label_width if label_width is not None else max(len(bar.label) for bar in bars)
    left, right = f"-{scale:.1f}%", f"+{scale:.1f}%"
    # "0%" sits with its "0" over the axis; the scale's ends sit over the bar's ends.
    axis = f"{'':<{width}} {left:<{half_width}}0%{right:>{half_width - 1}}"
    lines = [axis.rstrip()]
    for bar in bars:
        value = "NA" if not math.isfinite(bar.improvement) else f"{bar.improvement:+.2f}%"
        line = f"{bar.label:<{width}} {render_bar(bar.improvement, scale, half_width)}  {value:>8} {bar.confidence}"
        lines.append(line.rstrip())
    return "\n".join(lines)

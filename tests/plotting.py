"""For the chart tests: a compare.js CSV (the example suite's sample, and a generated one of many rows), and the
charts' SVG read back."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "compare-sample.csv"
SVG = "{http://www.w3.org/2000/svg}"  # the SVG namespace, as ElementTree spells its tags


def parse(svg: str) -> ET.Element:
    """An SVG document's root element."""
    return ET.fromstring(svg.encode("utf-8"))


def svg_size(path: Path) -> tuple[float, float]:
    """Width and height of an SVG file in pixels (and a check that it is an SVG at all)."""
    root = ET.parse(path).getroot()
    assert root.tag == f"{SVG}svg" and root.get("viewBox") == f"0 0 {root.get('width')} {root.get('height')}"
    return float(root.get("width")), float(root.get("height"))


def write_compare_csv(path: Path, rows: int = 200, runs: int = 30, seed: int = 11) -> Path:
    """A compare.js CSV of ``rows`` Node-like comparisons: mostly noise, a few regressions, two huge gains.

    Configurations are long (as Node's are) so labels must be shortened; a +300 % and a +760 %
    row force the forest's symmetric-log axis.
    """
    rng = np.random.default_rng(seed)
    files = [
        "buffers/buffer-compare.js",
        "buffers/buffer-concat.js",
        "streams/creation.js",
        "url/url-parse.js",
        "util/format.js",
        "http/headers.js",
        "fs/readfile.js",
        "crypto/hash-stream-creation.js",
        "zlib/deflate.js",
        "string_decoder/string-decoder.js",
    ]
    effects = rng.normal(0, 0.01, rows)
    effects[[5, 17, 40, 99, 150]] = [-0.12, 3.0, 7.6, -0.3, -0.05]
    lines = ['"binary","filename","configuration","rate","time"']
    for row in range(rows):
        filename = files[row % len(files)]
        configuration = f"n={1_000_000 + row} size={2 ** (row % 14)} pieceSize={row % 5} type='long-config-{row}'"
        base = 10 ** rng.uniform(3, 7)
        for _ in range(runs):
            for side, effect in (("old", 0.0), ("new", effects[row])):
                lines.append(
                    f'"{side}","{filename}","{configuration}",{float(base * (1 + effect) * rng.normal(1, 0.03))!r},1'
                )
    path.write_text("\n".join(lines) + "\n")
    return path

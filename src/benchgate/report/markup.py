"""Markdown for the PR comment: untrusted text (anything from a run directory) through ``code`` or ``block``
cannot inject markdown, HTML or @-mentions; ``plain`` escapes our own text so it renders literally. Also the
plain-text lines every command prints (``failure_lines``): this module loads no pandas, so ``run`` starts fast."""

import html
import re
from collections import Counter
from collections.abc import Iterable, Sequence

from tabulate import DataRow, TableFormat, tabulate

FORMATS = ("text", "markdown", "json", "csv")  # of a printed analysis (tables.render), in every command

CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")  # all but tab and newline, which multi-line text keeps
AS_R = str.maketrans({"\n": "\\n", "\r": "\\r", "\t": "\\t"})  # as R prints them: compare.R's row names
# Characters that start emphasis, code, links or table cells mid-line (html.escape handles < > &).
MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]|~])")


def one_line(text: str) -> str:
    """Untrusted text on one line: every control character, tab and newline too, a space."""
    return CONTROL.sub(" ", str(text)).replace("\n", " ").replace("\t", " ")


def code(text: str, *, in_table: bool = False, limit: int = 300) -> str:
    """Untrusted text as a code span: no markdown, HTML or mentions inside."""
    text = one_line(text).replace("`", "'")
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    if in_table:
        text = text.replace("|", "\\|")
    return f"`{text}`" if text.strip() else "` `"


def plain(text: str) -> str:
    """Text built by us from trusted parts, escaped so it renders literally and pings nobody."""
    escaped = MARKDOWN_SPECIAL.sub(r"\\\1", html.escape(CONTROL.sub(" ", text), quote=False))
    return escaped.replace("@", "@\u2060")


def block(text: str) -> str:
    """Untrusted text as a fenced text block (backticks cannot close the fence once they are gone)."""
    return "```text\n" + CONTROL.sub(" ", text).replace("`", "'").rstrip("\n") + "\n```"


def table(header: Sequence[str], rows: Iterable[Sequence[str]], align: str) -> list[str]:
    """A GitHub table's lines, ``align`` a letter per column (l, c, r); cells are escaped by the caller and not
    padded (one long benchmark name would widen every row of a comment limited to 65,536 characters)."""
    rule = "|" + "|".join({"l": ":--", "c": ":-:", "r": "--:"}[letter] for letter in align) + "|"
    edges = DataRow("|", "|", "|")
    layout = TableFormat(None, lambda *_: rule, None, None, edges, edges, 1, None)
    options = {"stralign": None, "numalign": None, "disable_numparse": True, "preserve_whitespace": True}
    return tabulate([list(row) for row in rows], list(header), tablefmt=layout, **options).split("\n")


def failure_lines(failures: Sequence) -> tuple[str, ...]:
    """One line per benchmark, side and reason of failed processes (run.json's or a summary's), with their count;
    run.json's entries also say when a head failure gates (the base succeeded)."""
    counts = Counter(
        (f"{f.filename} {f.configuration or ''}".strip(), f.side, f.reason, bool(f.gating)) for f in failures
    )
    return tuple(
        f"{name} failed on the {side} ({count} process{'es' if count > 1 else ''}): {reason}"
        + (" (gating: the base succeeded)" if gating else "")
        for (name, side, reason, gating), count in counts.items()
    )

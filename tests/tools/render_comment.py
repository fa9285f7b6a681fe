"""Render a benchgate PR comment (markdown) to a PNG, the way a pull request page shows it: docs/comment.png.

    python tests/tools/render_comment.py COMMENT.md docs/comment.png [--width 1000]

Needs the `markdown` and `pillow` packages (pip) and Chromium (Debian: `chromium`); neither is a dependency of
benchgate. The style is a plain approximation of GitHub's comment box, written here.
"""

from __future__ import annotations

import argparse
import html
import subprocess
import tempfile
from pathlib import Path

STYLE = """
body { margin: 0; padding: 16px; background: #ffffff; font: 14px/1.5 -apple-system, "Segoe UI", "Noto Sans",
       "DejaVu Sans", Helvetica, Arial, sans-serif; color: #1f2328; }
.box { border: 1px solid #d1d9e0; border-radius: 6px; }
.head { background: #f6f8fa; border-bottom: 1px solid #d1d9e0; padding: 8px 16px; color: #59636e;
        border-radius: 6px 6px 0 0; }
.head b { color: #1f2328; }
.body { padding: 8px 16px 16px; }
h3 { font-size: 18px; margin: 12px 0 8px; } h4 { font-size: 15px; margin: 16px 0 8px; }
code { font: 12px/1.4 "DejaVu Sans Mono", monospace; background: #eff1f3; padding: 1px 4px; border-radius: 4px; }
pre { background: #f6f8fa; padding: 10px; border-radius: 6px; overflow: hidden; }
pre code { background: none; padding: 0; font-size: 11px; }
table { border-collapse: collapse; margin: 8px 0; font-size: 12px; }
th, td { border: 1px solid #d1d9e0; padding: 4px 8px; } th { background: #f6f8fa; }
tr:nth-child(2n) td { background: #f6f8fa; }
blockquote { margin: 8px 0; padding: 0 12px; color: #59636e; border-left: 4px solid #d1d9e0; }
details summary { cursor: pointer; color: #0969da; } sub { color: #59636e; }
a { color: #0969da; text-decoration: none; }
"""


def to_html(markdown_text: str) -> str:
    """The comment as a page: a GitHub-like comment box around the rendered markdown."""
    import markdown

    body = markdown.markdown(markdown_text, extensions=["tables", "fenced_code", "md_in_html"])
    header = '<div class="head"><b>github-actions</b> <span>bot</span> commented</div>'
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><style>{STYLE}</style></head>"
        f"<body><div class='box'>{header}<div class='body'>{body}</div></div></body></html>"
    )


def screenshot(page: Path, output: Path, width: int, height: int) -> None:
    subprocess.run(
        [
            "chromium",
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--disable-background-networking",
            "--disable-component-update",
            "--no-first-run",
            f"--window-size={width},{height}",
            f"--screenshot={output}",
            page.as_uri(),
        ],
        check=True,
        capture_output=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("comment", type=Path)
    parser.add_argument("output", type=Path)
    parser.add_argument("--width", type=int, default=1000)
    parser.add_argument("--height", type=int, default=1400)
    arguments = parser.parse_args()
    text = arguments.comment.read_text(encoding="utf-8")
    with tempfile.TemporaryDirectory() as directory:
        page = Path(directory) / "comment.html"
        page.write_text(to_html(text), encoding="utf-8")
        screenshot(page, arguments.output.resolve(), arguments.width, arguments.height)
    trim(arguments.output)
    print(f"wrote {arguments.output} ({html.escape(str(arguments.width))} px wide)")


def trim(png: Path, margin: int = 16) -> None:
    """Cut the empty page below the comment (the screenshot is taller than the comment)."""
    from PIL import Image, ImageChops

    image = Image.open(png).convert("RGB")
    background = Image.new("RGB", image.size, (255, 255, 255))
    box = ImageChops.difference(image, background).getbbox()
    if box:
        image.crop((0, 0, image.width, min(image.height, box[3] + margin))).save(png, optimize=True)


if __name__ == "__main__":
    main()

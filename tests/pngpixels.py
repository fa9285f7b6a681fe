"""A PNG's pixels without Pillow: enough of the format (8-bit RGB/RGBA, not interlaced) for Chromium's screenshots."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path


def read_png(path: Path) -> tuple[int, int, list[bytes]]:
    """``(width, height, rows)``: each row the RGB(A) bytes of one line of pixels, filters undone."""
    data = Path(path).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    offset, chunks, header = 8, [], b""
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset : offset + 4])
        kind = data[offset + 4 : offset + 8]
        body = data[offset + 8 : offset + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            chunks.append(body)
        offset += 12 + length
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert depth == 8 and colour in (2, 6) and interlace == 0, f"unsupported PNG: depth {depth} colour {colour}"
    channels = 4 if colour == 6 else 3
    raw = zlib.decompress(b"".join(chunks))
    stride = width * channels
    rows: list[bytes] = []
    previous = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                guess = left + up - corner
                pa, pb, pc = abs(guess - left), abs(guess - up), abs(guess - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 255
        rows.append(bytes(line) if channels == 3 else bytes(b for j, b in enumerate(line) if j % 4 != 3))
        previous = line
    return width, height, rows


def count_colour(rows: list[bytes], colour: str, tolerance: int = 24) -> int:
    """How many pixels are within ``tolerance`` (per channel) of ``#RRGGBB``."""
    want = bytes.fromhex(colour.lstrip("#"))
    found = 0
    for row in rows:
        for i in range(0, len(row), 3):
            if all(abs(row[i + c] - want[c]) <= tolerance for c in range(3)):
                found += 1
    return found


def distinct_colours(rows: list[bytes], step: int = 7) -> int:
    """Distinct colours among every ``step``-th pixel: 1 for a blank picture."""
    return len({row[i : i + 3] for row in rows[::step] for i in range(0, len(row), 3 * step)})

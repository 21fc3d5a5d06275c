"""webworld.data.png: a fast-deflated PNG stored smaller, with the same bytes inflated."""

from __future__ import annotations

import io
import struct
import zlib

import numpy as np
from PIL import Image

from webworld.data.png import SIGNATURE, compact_png


def _png(level: int, size: tuple[int, int] = (120, 90)) -> bytes:
    rng = np.random.default_rng(0)
    base = np.zeros((size[1], size[0], 3), np.uint8)
    base[::7] = 200  # stripes, so deflate levels differ
    base[:, ::5, 1] = rng.integers(0, 255, (size[1], (size[0] + 4) // 5), dtype=np.uint8)
    out = io.BytesIO()
    Image.fromarray(base).save(out, "PNG", compress_level=level)
    return out.getvalue()


def _chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    out, at = [], len(SIGNATURE)
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        body = data[at + 8:at + 8 + length]
        assert struct.unpack(">I", data[at + 8 + length:at + 12 + length])[0] == zlib.crc32(kind + body)
        out.append((kind, body))
        at += 12 + length
    return out


def _inflated(data: bytes) -> bytes:
    return zlib.decompress(b"".join(b for k, b in _chunks(data) if k == b"IDAT"))


def test_a_fast_png_is_deflated_again_losslessly() -> None:
    fast = _png(1)
    compact = compact_png(fast)
    assert len(compact) < len(fast)
    assert _inflated(compact) == _inflated(fast)  # the same filtered rows, bit for bit
    assert [k for k, _ in _chunks(compact)] == [b"IHDR", b"IDAT", b"IEND"]
    with Image.open(io.BytesIO(compact)) as a, Image.open(io.BytesIO(fast)) as b:
        assert np.array_equal(np.asarray(a), np.asarray(b))
    assert compact_png(compact) is compact  # already at the default level


def test_what_it_does_not_change() -> None:
    default = _png(6)
    assert compact_png(default) is default
    for odd in (b"", b"GIF89a", SIGNATURE, _png(1)[:-7], _png(1) + b"tail"):
        assert compact_png(odd) is odd

"""Lossless re-compression of PNG files: the same pixels, the same bytes once inflated.

The verifier's screenshots (:mod:`webworld.browser.capture`) are encoded by Chromium for
speed: each row filtered, then deflated at zlib's fastest level. :func:`compact_png`
deflates the same filtered rows again at :data:`LEVEL` (no decoding, no new filters), so
the image data is bit for bit what Chromium wrote and the file is about 40% smaller. A
file already deflated at a default or better level, or not a PNG this function reads,
is returned as it is.
"""

from __future__ import annotations

import struct
import zlib

SIGNATURE = b"\x89PNG\r\n\x1a\n"
LEVEL = 6
_FAST = 2  # zlib's FLEVEL (bits 6-7 of the stream's second byte) below "default": fast levels


def png_size(header: bytes) -> tuple[int, int] | None:
    """(width, height) from a PNG's first 24 bytes; None if they are not a PNG's."""
    if len(header) < 24 or not header.startswith(SIGNATURE) or header[12:16] != b"IHDR":
        return None
    return struct.unpack(">II", header[16:24])


def compact_png(data: bytes) -> bytes:
    """``data`` with its image data deflated again at :data:`LEVEL` if that was faster
    (see the module doc); ancillary chunks are kept, in their order."""
    chunks = _chunks(data)
    if chunks is None:
        return data
    idat = b"".join(body for kind, body in chunks if kind == b"IDAT")
    if len(idat) < 2 or idat[1] >> 6 >= _FAST:
        return data
    deflated = zlib.compress(zlib.decompress(idat), LEVEL)
    out, placed = [SIGNATURE], False
    for kind, body in chunks:
        if kind == b"IDAT":
            if not placed:
                out.append(_chunk(b"IDAT", deflated))
                placed = True
            continue
        out.append(_chunk(kind, body))
    compacted = b"".join(out)
    return compacted if len(compacted) < len(data) else data


def _chunks(data: bytes) -> list[tuple[bytes, bytes]] | None:
    """``(type, body)`` of every chunk, or None for what is not a well-formed PNG."""
    if not data.startswith(SIGNATURE):
        return None
    out, at = [], len(SIGNATURE)
    while at + 12 <= len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        end = at + 12 + length
        if end > len(data):
            return None
        out.append((kind, data[at + 8:at + 8 + length]))
        at = end
        if kind == b"IEND":
            return out if at == len(data) else None
    return None


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

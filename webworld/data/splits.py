"""Train / validation / test splits by world, so evaluation sees only unseen sites.

Worlds are ordered by a SHA-256 of ``(seed, world id)`` and cut into consecutive runs.
The order of a world does not depend on the other worlds, so adding a world to a later
export moves few others across a boundary (a random shuffle would move most of them).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Collection

from webworld.errors import UsageError

SPLITS: tuple[str, str, str] = ("train", "validation", "test")
# With fewer worlds than splits, worlds go to these first: a held-out test world is worth
# more than a validation one.
FILL_ORDER: tuple[str, str, str] = ("train", "test", "validation")


def check_fractions(fractions: tuple[float, float, float]) -> tuple[float, float, float]:
    if len(fractions) != 3 or any(not math.isfinite(f) or f < 0 for f in fractions):
        raise UsageError(f"splits must be three fractions >= 0 (train, validation, test), "
                         f"got {tuple(fractions)}")
    if abs(sum(fractions) - 1.0) > 1e-6 or fractions[0] <= 0:
        raise UsageError(f"split fractions must sum to 1 with train > 0, got {tuple(fractions)}")
    return tuple(float(f) for f in fractions)  # type: ignore[return-value]


def world_order(worlds: list[str], seed: int) -> list[str]:
    return sorted(worlds, key=lambda w: (hashlib.sha256(f"{seed}\x1f{w}".encode()).digest(), w))


def split_counts(n: int, fractions: tuple[float, float, float]) -> tuple[dict[str, int], str | None]:
    """How many worlds each split gets, and a note when there are too few to go round."""
    wanted = [s for s, f in zip(SPLITS, fractions) if f > 0]
    if n < len(wanted):
        filled = [s for s in FILL_ORDER if s in wanted][:n]
        counts = {s: int(s in filled) for s in SPLITS}
        empty = [s for s in FILL_ORDER if s in wanted and s not in filled]
        note = (f"only {n} world{'s' * (n != 1)} for {len(wanted)} splits: filled "
                f"{', then '.join(filled) or 'nothing'}; {' and '.join(empty)} "
                f"{'is' if len(empty) == 1 else 'are'} empty")
        return counts, note
    # Largest remainder, then make sure every wanted split has at least one world.
    exact = {s: n * f for s, f in zip(SPLITS, fractions)}
    counts = {s: math.floor(v) for s, v in exact.items()}
    by_remainder = sorted(SPLITS, key=lambda s: (-(exact[s] - counts[s]), SPLITS.index(s)))
    for s in by_remainder[: n - sum(counts.values())]:
        counts[s] += 1
    for s in wanted:
        if counts[s] == 0:
            donor = max(SPLITS, key=lambda d: (counts[d], -SPLITS.index(d)))
            counts[donor] -= 1
            counts[s] += 1
    return counts, None


def assign_splits(worlds: list[str], fractions: tuple[float, float, float] = (0.8, 0.1, 0.1),
                  seed: int = 0, held_out: Collection[str] = ()
                  ) -> tuple[dict[str, list[str]], str | None]:
    """``{split: [world, ...]}`` (every split present, worlds sorted) and an optional note.
    Worlds in ``held_out`` (webworld.data.heldout's) go to test, never to train."""
    fractions = check_fractions(fractions)
    if len(set(worlds)) != len(worlds):
        raise UsageError("world ids must be unique")
    kept = sorted(set(worlds) & set(held_out))
    rest = [w for w in worlds if w not in set(kept)]
    counts, note = split_counts(len(rest), fractions)
    ordered = world_order(rest, seed)
    out: dict[str, list[str]] = {}
    start = 0
    for s in SPLITS:
        out[s] = sorted(ordered[start:start + counts[s]])
        start += counts[s]
    if kept:
        out["test"] = sorted(out["test"] + kept)
        moved = f"{len(kept)} held-out world(s) kept in test ({', '.join(kept[:3])}" \
                f"{' ...' if len(kept) > 3 else ''})"
        note = f"{note}; {moved}" if note else moved
    return out, note

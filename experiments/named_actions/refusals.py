"""What a named policy does after a refused name, from two evals' per-episode records.

    .venv/bin/python experiments/named_actions/refusals.py \
        experiments/named_actions/records/1epoch/eval/heldout-sft.jsonl \
        experiments/named_actions/records/refusals-1epoch/eval/heldout-sft.jsonl

For each: episodes solved, failure reasons, refusal codes, and what came after each
``no_match`` (the same action again, another refused one, or an action the page took); then
the two paired on the episodes both played (won / lost by the second).
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path


def episodes(path: Path) -> dict[str, dict]:
    with path.open(encoding="utf-8") as f:
        return {row["key"]: row for row in map(json.loads, f)}


def after_no_match(row: dict) -> Counter:
    """What followed each refused name of one episode."""
    refused = {e["step"] for e in row["errors"]}
    out: Counter = Counter()
    for e in row["errors"]:
        if e["code"] == "no_match" and e["step"] < row["steps"]:
            if row["actions"][e["step"]] == row["actions"][e["step"] - 1]:
                out["repeated"] += 1
            else:
                out["refused other" if e["step"] + 1 in refused else "acted"] += 1
    return out


def summary(rows: dict[str, dict]) -> str:
    played = list(rows.values())
    failures = Counter(r["failure"] for r in played if not r["success"])
    codes = Counter(e["code"] for r in played for e in r["errors"])
    after = sum((after_no_match(r) for r in played), Counter())
    return (f"solved {sum(r['success'] for r in played)}/{len(played)}; failures "
            f"{dict(failures.most_common())}; refusals {dict(codes.most_common())}; after "
            f"no_match {dict(after.most_common())}")


def main(first: str, second: str) -> None:
    a, b = episodes(Path(first)), episodes(Path(second))
    print(f"{first}: {summary(a)}\n{second}: {summary(b)}")
    both = a.keys() & b.keys()
    won = sum(b[k]["success"] and not a[k]["success"] for k in both)
    lost = sum(a[k]["success"] and not b[k]["success"] for k in both)
    print(f"paired on {len(both)} episodes: the second won {won}, lost {lost}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])

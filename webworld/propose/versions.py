"""The versions of the offline proposer. A world records the version that made it
(``provenance.generator_version``); the same theme, profile, seed and version give the same
bytes in any later webworld, so a dataset or a result of an older version can be rebuilt."""

from __future__ import annotations

GENERATOR_VERSIONS: dict[int, str] = {
    1: "the first worlds: kept as they were, so older datasets and results can be rebuilt",
    2: "coherent content: each category lists its own items, facts of their columns' kinds, "
       "filters and sorts of the site's kind",
    3: "pages as dense as real sites': a navigation bar, sidebar and footer of links, result "
       "lists of 10 to 40 entries over two pages (furniture that adds no task states)",
}
"""Every version of the offline proposer and what it changed; a spec records its own."""
LATEST_GENERATOR = max(GENERATOR_VERSIONS)
GENERATOR_HELP = "Version of the offline proposer: " + "; ".join(
    f"{version}: {what}" for version, what in GENERATOR_VERSIONS.items()) + "."

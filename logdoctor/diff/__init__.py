"""`logdoctor diff`: what the fast deployment (baseline) had that the slow one (candidate) lacks.

One vocabulary (logdoctor/vocabulary.py) names every setting and measurement in engine-neutral words;
each engine's package says how it spells them (dump key or log field, and the flag that sets it):

    key                     baseline (sglang)                        candidate (vllm 0.20.1)
    num_speculative_tokens  3   speculative_num_draft_tokens (k+1)   15  speculative_config.num_speculative_tokens
        port: --speculative-config '{"method": "mtp", "num_speculative_tokens": 3}'

compare.py   read, compare and port each row; rank the rows
gap.py       the throughput gap and its split over the causes found
The whole diff, from two parsed deployments to a DiffReport, is `logdoctor.app.diffs.diff_parsed`; the result
model is logdoctor/engine/diffresult.py (what the renderers import).
"""

from __future__ import annotations

from logdoctor.diff.compare import compare, folded, port, rank_rows, read, same, spelling, worse
from logdoctor.diff.gap import attribute, measure_gap
from logdoctor.engine.diffresult import (
    DIFF_SCHEMA_VERSION,
    CauseShare,
    Difference,
    DiffReport,
    DiffSide,
    Gap,
    engine_label,
    format_value,
)
from logdoctor.vocabulary import DIFF_ROWS, GROUPS, Setting, Side

# The rows of the diff table (the vocabulary's settings that diff compares), under the name diff gave them.
VOCABULARY = DIFF_ROWS
DiffKey = Setting

__all__ = [
    "DIFF_SCHEMA_VERSION",
    "GROUPS",
    "VOCABULARY",
    "CauseShare",
    "DiffKey",
    "DiffReport",
    "DiffSide",
    "Difference",
    "Gap",
    "Side",
    "attribute",
    "compare",
    "engine_label",
    "folded",
    "format_value",
    "measure_gap",
    "port",
    "rank_rows",
    "read",
    "same",
    "spelling",
    "worse",
]

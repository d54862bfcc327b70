"""One document checked, by phase: the whole document (`document.py`), the reading of a large text
shared by its analysis and its summary (`shared.py`), and the update after an edit, in proportion
to it (`incremental.py`)."""

from ai_eval_lsp.core.analysis.document import (
    Analysis,
    Rules,
    analyse,
    analyse_cases,
    analyse_rubric,
    summary_of,
)
from ai_eval_lsp.core.analysis.incremental import (
    CursorBefore,
    Edit,
    UnderCursor,
    at_after,
    at_before,
    before_broken,
    merged,
    update,
)
from ai_eval_lsp.core.analysis.shared import SHARED_FROM

__all__ = [
    "SHARED_FROM",
    "Analysis",
    "CursorBefore",
    "Edit",
    "Rules",
    "UnderCursor",
    "analyse",
    "analyse_cases",
    "analyse_rubric",
    "at_after",
    "at_before",
    "before_broken",
    "merged",
    "summary_of",
    "update",
]

"""A turn that ends by asking a question is not its own answer.

"Did you finish the painting you started in May?" shares every word with the question
"What did Melanie paint in May?", yet the answer is in the reply. Such a turn keeps
``ASKING_SHARE`` of its own fused score (its neighbours still count in full), so the reply
that answers it, which gains from the question through the neighbour term, can rank
above it. Measured on the LoCoMo development split as one of two changes (with the query's
names left out of its embedding, ``_query.py``): evidence recall@10 0.809 → 0.822.

Whether a document ends by asking is read in SQL from its stored text (its last
non-blank character is ``?``), the same expression on SQLite and PostgreSQL.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import func
from sqlalchemy.sql.elements import ColumnElement

from proctor.store import tables as t

ASKING_SHARE = 0.8
"""Share of its own fused score a document keeps when it ends by asking a question."""
BLANKS = " \t\r\n"


def asks_column(table: Any = None) -> ColumnElement[bool]:
    """SQL: whether the document's text ends with a question mark (trailing blanks aside)."""
    documents = t.search_documents if table is None else table
    expression: ColumnElement[bool] = func.rtrim(documents.c.text, BLANKS).like("%?")
    return expression


def asking_share(asks: bool | None) -> float:
    """What a document's own fused score is multiplied by."""
    return ASKING_SHARE if asks else 1.0

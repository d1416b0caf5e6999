"""Tables that stay readable at any terminal width, 80 columns and narrower.

Each column says what it holds, and that decides how it may give way:

* ``id`` — what a person types back (a ref, a run id, a rule id): never cut, never wrapped;
* ``fixed`` — short values such as times, counts and states: kept whole on one line;
* ``text`` — titles, scopes, descriptions, errors: wraps, a word too long for the column
  folds (or, with ``wrap=False``, one line ending in "…").

Headers are never cut: every column shown is at least as wide as its header. When the
columns' least widths do not fit the terminal, droppable columns go, least useful first
(``drop`` 1, then 2 …), and the caption names them. Widths are decided here, not left to
rich, which would otherwise squeeze a header to its first letter.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from rich.cells import cell_len
from rich.table import Table
from rich.text import Text

ColumnKind = Literal["id", "fixed", "text"]


@dataclass(frozen=True, slots=True)
class Column:
    """One column of a fitted table."""

    header: str
    kind: ColumnKind = "fixed"
    drop: int = 0
    """0: always shown; otherwise the order in which narrow terminals leave it out (1 first)."""
    justify: Literal["left", "right"] = "left"
    style: str | None = None
    wrap: bool = True
    """Text columns only: False keeps each value on one line, ending in "…" when cut."""
    least: int = 12
    """Text columns only: the narrowest the column may become (never below its header)."""


Cell = str | Text
_CHROME_PER_COLUMN = 3
"""Padding (one space each side) and one rule per column, with the default box."""


def _lines_width(cell: Cell) -> int:
    plain = cell.plain if isinstance(cell, Text) else cell
    return max((cell_len(line) for line in plain.split("\n")), default=0)


@dataclass(frozen=True, slots=True)
class _Measured:
    column: Column
    index: int
    least: int
    natural: int


def _measure(columns: Sequence[Column], rows: Sequence[Sequence[Cell]]) -> list[_Measured]:
    measured: list[_Measured] = []
    for index, column in enumerate(columns):
        header = cell_len(column.header)
        natural = max([header, *(_lines_width(row[index]) for row in rows)])
        least = natural if column.kind != "text" else max(header, min(natural, column.least))
        measured.append(_Measured(column, index, least, natural))
    return measured


def _needed(kept: Sequence[_Measured]) -> int:
    return sum(m.least for m in kept) + _CHROME_PER_COLUMN * len(kept) + 1


def _keep(measured: list[_Measured], width: int) -> list[_Measured]:
    """Leave out droppable columns, least useful first, until the rest fit ``width``."""
    kept = list(measured)
    while _needed(kept) > width:
        droppable = [m for m in kept if m.column.drop > 0]
        if not droppable:
            break  # nothing more to give: the terminal wraps what is left
        first = min(droppable, key=lambda m: (m.column.drop, -m.index))
        kept.remove(first)
    return kept


def _widths(kept: Sequence[_Measured], width: int) -> dict[int, int]:
    """Each kept column's width: its least, then the room left shared among text columns.

    When even the least widths do not fit, text columns give way down to their header.
    """
    widths = {m.index: m.least for m in kept}
    room = width - _needed(kept)
    while room < 0:
        giving = [m for m in kept if widths[m.index] > cell_len(m.column.header)]
        giving = [m for m in giving if m.column.kind == "text"]
        if not giving:
            break  # nothing more to give: the terminal wraps what is left
        widest = max(giving, key=lambda m: widths[m.index])
        widths[widest.index] -= 1
        room += 1
    growing = [m for m in kept if m.column.kind == "text" and m.natural > m.least]
    while room > 0 and growing:
        share = max(1, room // len(growing))
        for m in list(growing):
            grant = min(share, m.natural - widths[m.index], room)
            widths[m.index] += grant
            room -= grant
            if widths[m.index] >= m.natural:
                growing.remove(m)
            if room == 0:
                break
    return widths


def fitted_table(
    columns: Sequence[Column],
    rows: Sequence[Sequence[Cell]],
    *,
    width: int,
    title: str | None = None,
    hidden_hint: str = "widen the terminal or use --json",
) -> Table:
    """A table of ``rows`` whose columns fit ``width`` terminal columns as well as they can.

    Strings are shown literally (never read as markup); pass ``Text`` for styled cells.
    """
    measured = _measure(columns, rows)
    kept = _keep(measured, width)
    widths = _widths(kept, width)
    hidden = [m.column.header for m in measured if m not in kept]
    caption = f"not shown at this width: {', '.join(hidden)} ({hidden_hint})" if hidden else None
    table = Table(
        title=title,
        title_justify="left",
        caption=caption,
        caption_justify="left",
        caption_style="dim",
        expand=False,
    )
    for m in kept:
        column = m.column
        folds = column.kind == "text" and column.wrap
        table.add_column(
            column.header,
            justify=column.justify,
            style=column.style or "",
            width=widths[m.index],
            no_wrap=not folds,
            overflow="fold" if folds else "ellipsis",
        )
    for row in rows:
        table.add_row(*(_literal(row[m.index]) for m in kept))
    return table


def _literal(cell: Cell) -> Text:
    return cell if isinstance(cell, Text) else Text(cell)

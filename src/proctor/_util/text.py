"""Text on one line: the one way Proctor flattens and shortens what it shows."""

from __future__ import annotations


def one_line(
    text: str, limit: int, *, start: int = 0, end: int | None = None, trim: bool = False
) -> str:
    """``text[start:end]`` with every run of blanks (line breaks too) one space, in at most
    ``limit`` characters: cut at ``limit - 1`` with ``…`` after it where longer.

    With ``trim``, a space the cut leaves at its end is dropped before the ``…``.

    Not ``textwrap.shorten``: that cuts at a word boundary (dropping a long first word
    whole), which would change every finding title, excerpt and stored text made so far.
    """
    stop_at = len(text) if end is None else min(end, len(text))
    # Collapsing the blanks of a head of the text gives a head of the collapsed text: once
    # that is too long, the rest need not be read (a long tool output is not split whole).
    reach = limit + 64
    while True:
        stop = min(stop_at, start + reach)
        flat = " ".join(text[start:stop].split())
        if len(flat) > limit:
            kept = flat[: limit - 1]
            return (kept.rstrip() if trim else kept) + "…"
        if stop >= stop_at:
            return flat
        reach *= 4

"""Rebuild a conversation's order from the ``uuid`` → ``parentUuid`` tree, not file order.

Owns node identity (ids for records without a ``uuid``, records that reuse a ``uuid``),
repair of broken trees (a parent that is not in the file starts a new root; a cycle is
cut), the depth-first order messages are emitted in (children by timestamp, then file
order) and which branch is active.

Branches: at a node whose children lead to *different messages*, the child whose
subtree holds the newest message wins and the others are abandoned (rewind, edit,
fork). Children that only lead to tool results, progress lines or further lines of the
same API response are not branches: parallel tool calls fan out that way in every
real log.

Link records (``progress`` lines above all: most records of a real session, and the
hook, shell and agent progress they carry is read elsewhere or superseded by the tool
result) are folded out of the order while it is walked: a record without content that
has a parent and at most one child is left out of ``Placed`` and its child takes its
place among its parent's children, so branch marking, message building and result
pairing never see it. Only records the walk reaches are folded, so a parent cycle is
still found and cut exactly as without folding (then nothing is folded); a folded
record still has its key (children name it, ``Placed`` keeps every node's own parent
key) and its dangling-parent and reused-uuid warnings, which are decided before the
walk. ``Threaded.folded`` maps each folded key to its nearest kept ancestor, which is
what a child of it has above it.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from proctor.sources.claude_code._model import Node
from proctor.sources.claude_code._values import parse_time
from proctor.transcript import SourceIssue

_NO_TIME = -math.inf


Placed = tuple[Node, str | None, bool]
"""A node in thread order: the node, its effective parent's key after repairs (None for
a root) and whether it is on the active branch. A plain tuple: one is made per record of
a session, and the thread's are zipped together in C (an object each cost more than
ordering them)."""

_NODE_KEY = operator.attrgetter("key")
_FOLLOWS_PREVIOUS = operator.attrgetter("follows_previous")


def assign_keys(
    nodes: Sequence[Node], scope: str, shown: str
) -> tuple[list[Node], list[SourceIssue]]:
    """Give every node a unique key and resolve implicit parents.

    Records without a ``uuid`` get ``<scope>:<line>`` (position, scoped to the session);
    records without a ``parentUuid`` field follow the record before them. A record that
    repeats an earlier record exactly is a re-written copy and is dropped; a *different*
    record that reuses a ``uuid`` is kept as ``<uuid>#2``, ``#3`` … with one warning (or
    replaces the earlier one when that carried no readable content).
    """
    distinct = set(map(_NODE_KEY, nodes))
    if (
        len(distinct) == len(nodes)
        and None not in distinct
        and not any(map(_FOLLOWS_PREVIOUS, nodes))
    ):
        # Most files: every record has its own uuid and a ``parentUuid`` field, so there
        # is nothing to assign; told in C instead of record by record.
        return list(nodes), []
    kept: list[Node] = []
    by_key: dict[str, Node] = {}
    copies: dict[str, int] = {}
    reused: list[tuple[Node, str]] = []
    previous: str | None = None
    for node in nodes:
        key = node.key if node.key is not None else f"{scope}:{node.line}"
        node.key = key
        if node.follows_previous:
            node.parent = previous
        first = by_key.get(key)
        if first is not None:
            if _same_record(first, node):
                continue
            if first.entry is None and node.entry is not None:
                # The earlier holder carried nothing readable (a damaged record): the
                # record with content takes the uuid its children point at.
                kept.remove(first)
            else:
                copies[key] = copies.get(key, 1) + 1
                node.key = f"{key}#{copies[key]}"
            reused.append((node, key))
        by_key[node.key] = node
        kept.append(node)
        previous = node.key
    issues: list[SourceIssue] = []
    if reused:
        node, key = reused[0]
        issues.append(
            SourceIssue(
                shown,
                f"{len(reused)} record(s) reuse a uuid of a different record (first: {key!r}); "
                "they were kept under suffixed ids",
                node.line,
                severity="warning",
            )
        )
    return kept, issues


@dataclass(slots=True)
class Threaded:
    """A conversation's records in thread order (``thread``)."""

    placed: list[Placed]
    """The kept records in thread order (folded link records left out)."""
    issues: list[SourceIssue]
    """Warnings for dangling parents and broken cycles."""
    folded: dict[str, str]
    """Each folded record's key → the key of its nearest kept ancestor."""


_FOLD_SIBLINGS = 16
"""A link record is folded only where its parent has at most this many children: its
place among them is found by a scan."""


def thread(
    nodes: Sequence[Node],
    *,
    message_starts: Collection[str],
    shown: str,
    first_parent_is_external: bool = False,
    fold_links: bool = True,
) -> Threaded:
    """Order ``nodes`` depth-first and mark abandoned branches.

    Args:
        nodes: Keyed nodes in file order (see :func:`assign_keys`).
        message_starts: Keys of nodes that begin a message; only these make a branch.
        shown: The file, for issues.
        first_parent_is_external: The first record's parent is expected to be in another
            file (a sub-agent's first prompt points into the parent session).
        fold_links: Leave link records out of the order (module docstring); False gives
            every node its place (the reference the folding is tested against).
    """
    if fold_links:
        children, roots, parent_of, issues = _tree(nodes, shown, first_parent_is_external)
        distinct = len(parent_of) == len(nodes)
        order, folded = _depth_first_folding(roots, children, parent_of, distinct)
        if len(order) + len(folded) == len(nodes):
            placed = _mark_branches(order, children, parent_of, message_starts)
            return Threaded(placed, issues, folded)
        # Some records sit on a parent cycle: the plain walk finds and cuts it.
    children, roots, parent_of, issues = _tree(nodes, shown, first_parent_is_external)
    order = _depth_first(roots, children)
    if len(order) < len(nodes):  # some records sit on a parent cycle no root reaches
        _break_cycles(nodes, roots, children, parent_of, shown, issues)
        order = _depth_first(roots, children)
    return Threaded(_mark_branches(order, children, parent_of, message_starts), issues, {})


def _tree(
    nodes: Sequence[Node], shown: str, first_parent_is_external: bool
) -> tuple[
    dict[str | None, list[Node]], list[Node], dict[str | None, str | None], list[SourceIssue]
]:
    """Children, roots and each node's parent after dangling parents are made roots."""
    # Each key's parent as written, repaired below; it serves as the set of keys too.
    # Keys are typed ``str | None`` here only so they need no re-check (see below).
    parent_of: dict[str | None, str | None] = {node.key: node.parent for node in nodes}
    if None in parent_of:
        raise ValueError("node without a key")  # assign_keys runs first
    children: dict[str | None, list[Node]] = {}
    roots: list[Node] = []
    issues: list[SourceIssue] = []
    cut = False
    children_get = children.get
    for position, node in enumerate(nodes):
        parent = node.parent
        if parent is None:
            roots.append(node)
        elif parent in parent_of:
            kids = children_get(parent)
            if kids is None:  # no ``setdefault``: it would make a list for every node
                children[parent] = [node]
            else:
                kids.append(node)
        else:
            if not (first_parent_is_external and position == 0):
                issues.append(
                    SourceIssue(
                        shown,
                        f"parent {parent!r} is not in this file; the record starts a new root",
                        node.line,
                        severity="warning",
                    )
                )
            parent_of[node.key] = None
            cut = True
            roots.append(node)
    if cut and len(parent_of) < len(nodes):
        # A parent was cut and some key is held by more than one record: the last record
        # holding a key decides its parent, after the cut (rare: a damaged file).
        for node in nodes:
            parent = node.parent
            parent_of[node.key] = parent if parent is None or parent in parent_of else None
    return children, roots, parent_of, issues


def _key(node: Node) -> str:
    if node.key is None:  # assign_keys runs first; this guards the type only
        raise ValueError("node without a key")
    return node.key


def _same_record(first: Node, other: Node) -> bool:
    if (first.parent, first.raw_time, first.sidechain) != (
        other.parent,
        other.raw_time,
        other.sidechain,
    ):
        return False
    a, b = first.entry, other.entry
    if a is None or b is None:
        return a is b
    return (
        a.kind == b.kind
        and a.texts == b.texts
        and a.message_id == b.message_id
        and [u.call_id for u in a.tool_uses] == [u.call_id for u in b.tool_uses]
        and [(o.call_id, o.text) for o in a.outcomes] == [(o.call_id, o.text) for o in b.outcomes]
    )


def _break_cycles(
    nodes: Sequence[Node],
    roots: list[Node],
    children: dict[str | None, list[Node]],
    parent_of: dict[str | None, str | None],
    shown: str,
    issues: list[SourceIssue],
) -> None:
    """Nodes no root reaches sit on a parent cycle: cut each cycle at its earliest line."""
    reached: set[str] = set()
    _reach(roots, children, reached)
    for node in nodes:
        if _key(node) in reached:
            continue
        walked: list[str] = []
        seen: set[str] = set()
        current: str | None = _key(node)
        while current is not None and current not in seen and current not in reached:
            seen.add(current)
            walked.append(current)
            current = parent_of.get(current)
        if current is None or current in reached:
            continue  # cannot happen for an unreached node; kept for safety
        cycle = set(walked[walked.index(current) :])
        members = [n for n in nodes if _key(n) in cycle]
        cut = min(members, key=lambda n: n.line)
        cut_key = _key(cut)
        old_parent = parent_of[cut_key]
        if old_parent is not None:
            siblings = children.get(old_parent, [])
            if cut in siblings:
                siblings.remove(cut)
        parent_of[cut_key] = None
        roots.append(cut)
        lines = sorted(n.line for n in members)
        issues.append(
            SourceIssue(
                shown,
                f"records on lines {', '.join(map(str, lines))} form a parent cycle; "
                f"it was cut at line {cut.line}",
                cut.line,
                severity="warning",
            )
        )
        _reach([cut], children, reached)


def _reach(
    start: Sequence[Node], children: dict[str | None, list[Node]], reached: set[str]
) -> None:
    stack = [_key(n) for n in start]
    while stack:
        key = stack.pop()
        if key in reached:
            continue
        reached.add(key)
        stack.extend(_key(child) for child in children.get(key, ()))


def _sort_key(node: Node) -> tuple[int, float, int]:
    moment = node.time if node.time is not None else parse_time(node.raw_time)
    if moment is None:
        return (1, 0.0, node.line)
    return (0, moment.timestamp(), node.line)


def _depth_first(roots: list[Node], children: dict[str | None, list[Node]]) -> list[Node]:
    order: list[Node] = []
    visited: set[str | None] = set()
    add = visited.add
    append = order.append
    stack = sorted(roots, key=_sort_key, reverse=True)
    while stack:
        node = stack.pop()
        key = node.key
        if key in visited:
            continue
        add(key)
        append(node)
        kids = children.get(key)
        if kids:
            if len(kids) > 1:
                stack.extend(sorted(kids, key=_sort_key, reverse=True))
            else:
                stack.append(kids[0])
    return order


def _depth_first_folding(
    roots: list[Node],
    children: dict[str | None, list[Node]],
    parent_of: dict[str | None, str | None],
    distinct: bool,
) -> tuple[list[Node], dict[str, str]]:
    """``_depth_first``, folding link records out on the way (module docstring);
    ``distinct``: no two nodes share a key.

    A folded record's place in its kept ancestor's children list is taken by its child
    (or emptied, for a leaf), so ``children`` describes the kept records' tree. The walk
    visits a folded record exactly where ``_depth_first`` would, so the order of the
    kept ones is the same. Returns the kept order and the folded keys with their
    nearest kept ancestors."""
    order: list[Node] = []
    folded: dict[str, str] = {}
    visited: set[str | None] = set()
    add = visited.add
    append = order.append
    children_get = children.get
    folded_get = folded.get
    stack = sorted(roots, key=_sort_key, reverse=True)
    pop = stack.pop
    while stack:
        node = pop()
        while True:  # ``node``, then the child that is walked right after it
            key = node.key
            if not distinct:  # with distinct keys no record is reached twice
                if key in visited:
                    break
                add(key)
            kids = children_get(key)
            if node.entry is None and (kids is None or len(kids) == 1):
                parent = parent_of[key]
                if parent is not None:  # not a root: roots keep their place
                    above = folded_get(parent, parent)
                    siblings = children[above]
                    if len(siblings) <= _FOLD_SIBLINGS and key is not None and above is not None:
                        at = siblings.index(node)
                        folded[key] = above
                        if kids is None:
                            del siblings[at]
                            break
                        node = siblings[at] = kids[0]
                        if distinct:
                            # Its child sits at ``at`` in the same list now, under the same
                            # kept ancestor: a chain of link records folds without
                            # looking that up again (the rest of the chain's test is the
                            # same as above).
                            while node.entry is None and node.key is not None:
                                key = node.key
                                kids = children_get(key)
                                if kids is not None and len(kids) != 1:
                                    break
                                folded[key] = above
                                if kids is None:
                                    del siblings[at]
                                    break
                                node = siblings[at] = kids[0]
                            else:
                                continue
                            if kids is None:
                                break
                        continue
            append(node)
            if not kids:
                break
            if len(kids) > 1:
                stack.extend(sorted(kids, key=_sort_key, reverse=True))
                break
            node = kids[0]
    return order, folded


def _mark_branches(
    order: list[Node],
    children: dict[str | None, list[Node]],
    parent_of: dict[str | None, str | None],
    message_starts: Collection[str],
) -> list[Placed]:
    # Keys are typed ``str | None`` here only so child keys need no re-check: every node
    # has a key once assign_keys has run. Most nodes have one child and begin no message
    # (a chain of progress lines): they take the child's newest message as it is.
    newest: dict[str | None, tuple[float, int]] = {}
    newest_get = newest.get
    children_get = children.get
    for node in reversed(order):
        key = node.key
        kids = children_get(key)
        if key in message_starts:
            best: tuple[float, int] | None = (
                node.time.timestamp() if node.time is not None else _NO_TIME,
                node.line,
            )
        elif kids is not None and len(kids) == 1:
            best = newest_get(kids[0].key)
            if best is not None:
                newest[key] = best
            continue
        else:
            best = None
        if kids:
            for child in kids:
                candidate = newest_get(child.key)
                if candidate is not None and (best is None or candidate > best):
                    best = candidate
        if best is not None:
            newest[key] = best
    inactive: set[str | None] = set()
    active: list[bool] = []
    append = active.append
    for node in order:
        key = node.key
        is_active = key not in inactive
        append(is_active)
        kids = children_get(key)
        if not kids:
            continue
        if len(kids) == 1:
            if not is_active:
                inactive.add(kids[0].key)
            continue
        branches = [child for child in kids if child.key in newest]
        winner = max(branches, key=lambda c: newest[c.key]) if len(branches) > 1 else None
        for child in kids:
            if not (is_active and (winner is None or child is winner)):
                inactive.add(child.key)
    return list(zip(order, map(parent_of.get, map(_NODE_KEY, order)), active, strict=True))

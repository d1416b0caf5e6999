"""Attribute names that carry messages but that no reader takes: damaged names, reported.

Messages reach Proctor only through attribute names it knows (``gen_ai.prompt.0.content``,
``llm.input_messages.0.message.content``, ``gen_ai.input.messages`` …); an attribute under
any other name is left alone, as OTLP allows any attribute. So a name damaged in transit
(``gen_ai.prompt.0.co~ntent``, a space, a stray letter) would make its message vanish
without a word. This module tells such names apart from the many attributes that are
simply not about messages, so the decoder can report each one by its line:

- a name under a flattened message list (``gen_ai.prompt.``, ``llm.input_messages.`` …)
  whose rest is not an index and a field a reader takes;
- a name with characters attribute names do not hold (spaces, control characters,
  punctuation, anything past ASCII);
- a name a few characters away from a message attribute (indexes compared as ``N``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from difflib import SequenceMatcher
from functools import lru_cache

_LEGACY_FIELD = re.compile(
    r"^\d+\.(?:role|content|name|tool_call_id|finish_reason"
    r"|tool_calls\.\d+\.(?:id|name|arguments|type))$"
)
"""What ``gen_ai.prompt.<i>.`` / ``gen_ai.completion.<i>.`` keys a reader takes."""
_OPENINFERENCE_FIELD = re.compile(r"^\d+\.message\.[a-z_]+(?:\.[A-Za-z0-9_]+)*$")
"""What ``llm.input_messages.<i>.`` / ``llm.output_messages.<i>.`` keys may be."""
_FLATTENED = {
    "gen_ai.prompt.": _LEGACY_FIELD,
    "gen_ai.completion.": _LEGACY_FIELD,
    "llm.input_messages.": _OPENINFERENCE_FIELD,
    "llm.output_messages.": _OPENINFERENCE_FIELD,
}
_NAME = re.compile(r"^[A-Za-z0-9_.\-:/@]+$")
"""Characters attribute names hold (the conventions use lowercase, digits, ``_``, ``.``)."""
_INDEX = re.compile(r"\d+")
_MESSAGE_NAMES = (
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.system_instructions",
    "gen_ai.prompt",
    "gen_ai.completion",
    *(f"gen_ai.prompt.N.{field}" for field in ("role", "content", "tool_call_id")),
    *(f"gen_ai.completion.N.{field}" for field in ("role", "content", "finish_reason")),
    *(
        f"llm.{side}_messages.N.message.{field}"
        for side in ("input", "output")
        for field in ("role", "content", "contents.N.message_content.text")
    ),
    "input.value",
    "output.value",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
)
"""Attributes whose values are messages (or their text), indexes written ``N``."""
_KNOWN = frozenset(_MESSAGE_NAMES)
_CLOSE = 0.85
"""How alike (``SequenceMatcher.ratio``) a name must be to a message attribute to be
taken for a damaged one: a letter or two inserted in ``gen_ai.prompt.0.content`` gives
0.93 and more; the attributes of the conventions that are not messages stay below 0.8."""


def unread_names(names: Iterable[str]) -> list[str]:
    """A description of each name in ``names`` that looks like a damaged message
    attribute (see the module docstring), in order."""
    problems: list[str] = []
    for name in names:
        problem = _problem(name)
        if problem is not None:
            problems.append(f'attribute "{name[:120]}": {problem}')
    return problems


_CACHED_LENGTH = 256
"""Names up to this long have their answer kept (``_known_problem``), so the cache stays
small whatever an export holds."""


def _problem(name: str) -> str | None:
    """What is wrong with ``name``, or None. Kept per name: an export repeats the same few
    attribute names on every span, and comparing an unknown one with every message name
    (``SequenceMatcher``) is the costly part."""
    if len(name) <= _CACHED_LENGTH:
        return _known_problem(name)
    return _name_problem(name)


@lru_cache(maxsize=4096)
def _known_problem(name: str) -> str | None:
    return _name_problem(name)


def _name_problem(name: str) -> str | None:
    for prefix, field in _FLATTENED.items():
        if name.startswith(prefix):
            if field.match(name[len(prefix) :]):
                return None
            return (
                f"not a message field Proctor reads under {prefix}<index>. "
                "(a damaged name?); its value was not imported"
            )
    if not _NAME.match(name):
        return (
            "the name holds characters attribute names do not (a damaged export?); "
            "its value was not imported"
        )
    shape = _INDEX.sub("N", name)
    if shape in _KNOWN:
        return None
    matcher = SequenceMatcher(None, "", shape, autojunk=False)
    for known in _MESSAGE_NAMES:
        matcher.set_seq1(known)
        if (
            matcher.real_quick_ratio() >= _CLOSE
            and matcher.quick_ratio() >= _CLOSE
            and matcher.ratio() >= _CLOSE
        ):
            return (
                f'looks like a damaged "{known}"; its value was not imported '
                "(check the exporter, or rename the attribute)"
            )
    return None

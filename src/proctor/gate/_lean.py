"""What the hook deciding alone does to import less work than a plain ``import`` would.

Without a server to forward to, ``proctor gate`` imports every rule before it decides, on
every tool call. Two parts of that work are the same each time and need not be done again:

- the rules' regular expressions, whose compiled opcodes come from a file under
  ``$PROCTOR_HOME/cache/gate`` (``_patterns``);
- the methods ``dataclasses`` writes and compiles for every dataclass, whose code objects
  come from a file beside it (``_dataclass_code``);
- pydantic's search of every installed package's metadata for pydantic plugins, made when
  the first model is built: a hook process has no use for them (they observe validation
  for tools such as logfire), so it is told there are none, unless
  ``PYDANTIC_DISABLE_PLUGINS`` already says otherwise.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from proctor.gate._dataclass_code import cached_dataclass_code
from proctor.gate._patterns import cached_patterns

PLUGINS_VARIABLE = "PYDANTIC_DISABLE_PLUGINS"


@contextmanager
def deciding_alone() -> Iterator[None]:
    """Around the hook's imports and decision when it decides in its own process."""
    from proctor._util.paths import proctor_home

    set_here = PLUGINS_VARIABLE not in os.environ
    if set_here:
        os.environ[PLUGINS_VARIABLE] = "__all__"
    try:
        cache = proctor_home() / "cache" / "gate"
        with cached_patterns(cache), cached_dataclass_code(cache):
            yield
    finally:
        if set_here:
            os.environ.pop(PLUGINS_VARIABLE, None)

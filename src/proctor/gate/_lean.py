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
  ``PYDANTIC_DISABLE_PLUGINS`` already says otherwise. Told so, pydantic would still
  import the module that searches (``pydantic.plugin._loader``), and with it
  ``importlib.metadata`` and ``email``, about 20 ms of a hook's 250: while deciding, a
  stand-in that answers "no plugins", as the real one does with plugins turned off, is
  imported in its place (only when the variable is set here and the module is not loaded
  yet), and taken away afterwards.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType

from proctor.gate._dataclass_code import cached_dataclass_code
from proctor.gate._patterns import cached_patterns

PLUGINS_VARIABLE = "PYDANTIC_DISABLE_PLUGINS"
PLUGIN_LOADER = "pydantic.plugin._loader"
"""The module pydantic asks for its plugins (``get_plugins``) when it builds a validator."""


@contextmanager
def deciding_alone() -> Iterator[None]:
    """Around the hook's imports and decision when it decides in its own process."""
    from proctor._util.paths import proctor_home

    set_here = PLUGINS_VARIABLE not in os.environ
    stand_in = _no_plugins() if set_here and PLUGIN_LOADER not in sys.modules else None
    if set_here:
        os.environ[PLUGINS_VARIABLE] = "__all__"
    if stand_in is not None:
        sys.modules[PLUGIN_LOADER] = stand_in
    try:
        cache = proctor_home() / "cache" / "gate"
        with cached_patterns(cache), cached_dataclass_code(cache):
            yield
    finally:
        if set_here:
            os.environ.pop(PLUGINS_VARIABLE, None)
        if stand_in is not None and sys.modules.get(PLUGIN_LOADER) is stand_in:
            del sys.modules[PLUGIN_LOADER]


def _no_plugins() -> ModuleType:
    """A ``pydantic.plugin._loader`` that finds no plugins, as the real one does when
    ``PYDANTIC_DISABLE_PLUGINS`` is ``__all__``."""
    module = ModuleType(PLUGIN_LOADER)
    module.get_plugins = tuple  # type: ignore[attr-defined]  # get_plugins() -> ()
    return module

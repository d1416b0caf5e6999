"""Names a package exports but imports only when first read (PEP 562).

A package's ``__init__`` lists where each of its public names lives; the module holding one
is imported the first time the name is read, and the value is then kept in the package's
namespace, so later reads are plain attribute reads. Commands that need one corner of a
package (the gate hook, a review with nothing new, the server's first request) do not pay
for the rest of it. Type checkers see the names through the ``TYPE_CHECKING`` imports each
package keeps beside its table.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # not typing's: the gate hook imports this module (see proctor.gate)
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, MutableMapping


def lazy_exports(
    package: str,
    where: Mapping[str, str],
    namespace: MutableMapping[str, object],
    *,
    renamed: Mapping[str, str] | None = None,
) -> Callable[[str], object]:
    """The ``__getattr__`` of ``package``: each name in ``where`` is read from the module
    named there (relative to ``package``, or a full ``proctor.…`` name), under its name in
    ``renamed`` when it has one there, and kept in ``namespace`` (the package's globals)."""
    aliases = renamed or {}

    def __getattr__(name: str) -> object:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        full = module if module.startswith("proctor.") else f"{package}.{module}"
        value = getattr(importlib.import_module(full), aliases.get(name, name))
        namespace[name] = value
        return value

    return __getattr__

"""``dataclasses.replace`` for the hot path of an import.

``dataclasses.replace`` walks the class's fields and checks each on every call; an
import replaces every message and tool call it prepares (redacted text, bounded values),
and that walk cost more than the new object. ``replaced`` reads the fields of each class
once, takes an object's values in one ``attrgetter`` call (in C) and builds the new
object positionally: the same object ``dataclasses.replace`` builds (the class's own
``__init__`` runs), for the dataclasses whose fields are all ``init`` fields.
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Callable
from typing import Any, TypeVar

_T = TypeVar("_T")

_Shape = tuple[dict[str, int], Callable[[Any], Any]]
_shapes: dict[type, _Shape | None] = {}


def _shape(cls: type) -> _Shape | None:
    """Field positions and a getter of all field values; None when the fast form does not
    apply (a field that is not an ``__init__`` parameter, an ``InitVar``, one field)."""
    fields = dataclasses.fields(cls)
    if len(fields) < 2 or not all(one.init for one in fields):
        return None
    if len(cls.__dataclass_fields__) != len(fields):  # type: ignore[attr-defined]
        return None  # an InitVar or ClassVar pseudo-field: the general path
    names = [one.name for one in fields]
    return {name: index for index, name in enumerate(names)}, operator.attrgetter(*names)


def replaced(obj: _T, /, **changes: Any) -> _T:
    """``dataclasses.replace(obj, **changes)``, faster (module docstring)."""
    cls = type(obj)
    try:
        shape = _shapes[cls]
    except KeyError:
        shape = _shapes[cls] = _shape(cls)
    if shape is None:
        return dataclasses.replace(obj, **changes)  # type: ignore[type-var]
    positions, values_of = shape
    values = list(values_of(obj))
    for name, value in changes.items():
        index = positions.get(name)
        if index is None:  # an unknown field: dataclasses.replace says which
            return dataclasses.replace(obj, **changes)  # type: ignore[type-var]
        values[index] = value
    return cls(*values)

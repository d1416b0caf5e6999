"""The garbage collector around a command's start.

Importing a command's modules allocates thousands of objects that all stay alive, and each
full collection the imports trigger walks every object imported before: about a third of
the CPU of importing the API, the store and the review pipeline on this machine. Collections
are paused while a command's modules are imported (``proctor.cli.main``) and while the
server builds its app (``proctor serve``, which then freezes what it built: the app lives
as long as the process, and later collections need not walk it again).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collection_paused() -> Iterator[None]:
    """No collections in the block; afterwards they run as they did before it."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()

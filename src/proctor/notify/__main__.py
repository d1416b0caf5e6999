"""``python -m proctor.notify``: the detached webhook deliverer ``hand_off_webhooks`` starts.

Opens the store it was handed (``PROCTOR_NOTIFY_SQLITE``, else the configured one),
delivers every notification waiting for its webhook, and exits. Failures are recorded on
the notifications; nothing is printed (nobody is reading).
"""

from __future__ import annotations

import os

from proctor.errors import ProctorError
from proctor.notify._deliver import SQLITE_VARIABLE, deliver_webhooks
from proctor.store import open_store


def main() -> int:
    """Deliver and exit: 0, or 1 when the store could not be opened."""
    try:
        store = open_store(os.environ.get(SQLITE_VARIABLE) or None)
    except ProctorError:
        return 1
    try:
        deliver_webhooks(store)
    finally:
        store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

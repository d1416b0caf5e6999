"""The supervisor app switch (SPEC HB-1).

The app is off until a person turns it on: a missing setting means disabled, and an
explicit value is kept as it was set. While it is off no plan is claimed and manual or
heartbeat review requests are refused; runs already executing finish and keep their
results, and nothing saved is touched.
"""

from __future__ import annotations

from proctor.errors import AppDisabledError
from proctor.store import ModelSettings, ModelSettingsReader

APP_ENABLED_SETTING = "app.enabled"
"""The setting that holds the switch (JSON ``true`` / ``false``)."""


def app_enabled(store: ModelSettingsReader) -> bool:
    """True only when the app was explicitly enabled."""
    return store.get_setting(APP_ENABLED_SETTING) is True


def set_app_enabled(store: ModelSettings, enabled: bool) -> None:
    """Turn the app on or off; the value is stored explicitly either way."""
    store.set_setting(APP_ENABLED_SETTING, bool(enabled))


def require_app(store: ModelSettings, what: str) -> None:
    """Raise ``AppDisabledError`` naming ``what`` unless the app is enabled."""
    if not app_enabled(store):
        raise AppDisabledError(
            f"the supervisor app is disabled: nothing automatic runs and {what} is refused; "
            "turn it on with `proctor app enable`"
        )

"""The supervisor app switch over HTTP (SPEC HB-1): read it, turn it on or off.

Off is the default. While the app is off no heartbeat plan is claimed and manual reviews
are refused; runs already executing finish, and nothing saved is touched.
"""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, StrictBool

from proctor.api._base_models import WireModel
from proctor.api._deps import ReaderDep, StoreDep
from proctor.heartbeat import app_enabled, set_app_enabled

router = APIRouter(prefix="/app", tags=["heartbeat"])


class AppSwitch(WireModel):
    """Whether the supervisor app is on."""

    enabled: bool
    """On: due plans run and reviews may be started. Off: neither happens."""


class AppSwitchBody(BaseModel):
    """Turn the supervisor app on or off."""

    model_config = ConfigDict(extra="forbid")

    enabled: StrictBool
    """``true`` turns it on, ``false`` off (as ``proctor app enable`` / ``disable``)."""


@router.get("")
def app_switch(store: ReaderDep) -> AppSwitch:
    """Whether the supervisor app is on (it is off until someone turns it on)."""
    return AppSwitch(enabled=app_enabled(store))


@router.put("")
def set_app_switch(store: StoreDep, body: AppSwitchBody) -> AppSwitch:
    """Turn the supervisor app on or off; saved plans, runs and results are kept either way."""
    set_app_enabled(store, body.enabled)
    return AppSwitch(enabled=app_enabled(store))

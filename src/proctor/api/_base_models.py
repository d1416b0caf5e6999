"""The base of the API's wire models: validators and serializers built on first use.

A pydantic model normally builds its validator and serializer when its class is made, and
FastAPI builds another for every route that takes or returns it. With ``defer_build`` both
wait for the first request (or the OpenAPI document) that needs them, so ``proctor serve``
does not build a hundred models it has not been asked about yet (issue 18: start < 1 s).
What a model accepts, returns and documents is unchanged.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class WireModel(BaseModel):
    """A request or response body of the API (built on first use)."""

    model_config = ConfigDict(defer_build=True)

"""Model connections and calls (SPEC MOD-1…MOD-4).

Saved connections (OpenAI-compatible, Anthropic, local GGUF) name the environment
variable holding their key, never the key. An execution resolves its connection once
(``resolve_supervisor_connection`` / ``resolve_connection``: never a fallback), reads the
pool limits once (``pool_limits``) and opens a caller (``open_caller``) that sends every
request through the FIFO pool with the stage timeout, the response capacity, the one
retry and per-attempt usage recording.
"""

from proctor.model_types import (
    AttemptUsage,
    ChatMessage,
    ModelCaller,
    ModelConnection,
    ModelRequest,
    ModelResponse,
    PoolLimits,
    Provider,
    Stage,
)
from proctor.models._caller import (
    RETRY_DELAY_S,
    PooledCaller,
    UsageRecorder,
    endpoint,
    open_caller,
    store_recorder,
)
from proctor.models._guard import check_allowed, model_requests_allowed
from proctor.models._pool import ModelPool
from proctor.models._resolve import (
    SupervisorChoice,
    key_is_set,
    resolve_connection,
    resolve_default_connection,
    resolve_supervisor_connection,
    supervisor_choice,
    unusable_reason,
)
from proctor.models._schema import grammar_schema, inline_refs, strict_schema
from proctor.models._settings import (
    default_connection_name,
    pin_supervisor,
    pool_limits,
    set_default_connection,
    set_pool_limits,
    supervisor_pin,
)
from proctor.store import ModelSettings, ModelUsage

__all__ = [
    "RETRY_DELAY_S",
    "AttemptUsage",
    "ChatMessage",
    "ModelCaller",
    "ModelConnection",
    "ModelPool",
    "ModelRequest",
    "ModelResponse",
    "ModelSettings",
    "ModelUsage",
    "PoolLimits",
    "PooledCaller",
    "Provider",
    "Stage",
    "SupervisorChoice",
    "UsageRecorder",
    "check_allowed",
    "default_connection_name",
    "endpoint",
    "grammar_schema",
    "inline_refs",
    "key_is_set",
    "model_requests_allowed",
    "open_caller",
    "pin_supervisor",
    "pool_limits",
    "resolve_connection",
    "resolve_default_connection",
    "resolve_supervisor_connection",
    "set_default_connection",
    "set_pool_limits",
    "store_recorder",
    "strict_schema",
    "supervisor_choice",
    "supervisor_pin",
    "unusable_reason",
]

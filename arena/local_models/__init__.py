"""The embedded CPU models (SmolLM2 135M, Qwen2.5 Coder 0.5B), served by xllamacpp on loopback.

Cheap to import: neither Django nor xllamacpp is loaded here. See ``specs`` for
what the models are, ``files`` for their status and preparation, ``serving``
for the per-model worker processes, and ``python -m arena.local_models --help``.
"""

from arena.local_models.files import (
    LocalModelStatus,
    local_model_status,
    prepare_local_models,
    prepare_model,
)
from arena.local_models.serving import (
    LocalModelFleet,
    LocalModelProcess,
    probe,
    serve,
    wait_until_ready,
)
from arena.local_models.specs import (
    LOCAL_MODELS,
    SYSTEM_PROMPT,
    LocalModelSpec,
    WheelFile,
    base_url_for,
    get_spec,
    port_for,
)

__all__ = [
    "LOCAL_MODELS",
    "SYSTEM_PROMPT",
    "LocalModelFleet",
    "LocalModelProcess",
    "LocalModelSpec",
    "LocalModelStatus",
    "WheelFile",
    "base_url_for",
    "get_spec",
    "local_model_status",
    "port_for",
    "prepare_local_models",
    "prepare_model",
    "probe",
    "serve",
    "wait_until_ready",
]

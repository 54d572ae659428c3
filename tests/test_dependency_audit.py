"""`python3 dev.py audit`: uv's audit of uv.lock, gated on known vulnerabilities, with the
allow-list honoured, against a real local service speaking the OSV API."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from testkit.fake_osv import FakeOSVServer

ROOT = Path(__file__).resolve().parent.parent


def locked_version(name: str) -> str:
    lock = tomllib.loads((ROOT / "uv.lock").read_text())
    return next(p["version"] for p in lock["package"] if p["name"] == name)


def audit(service: str, allow_list: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ARENA_AUDIT_SERVICE_URL": service,
           "ARENA_AUDIT_ALLOWLIST": str(allow_list)}
    return subprocess.run([sys.executable, "dev.py", "audit"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=240)


@pytest.fixture
def osv():
    with FakeOSVServer({("django", locked_version("django")): "PYSEC-2026-TEST"}) as server:
        yield server


def test_a_known_vulnerability_in_the_locked_set_fails_the_audit(osv, tmp_path):
    allow_list = tmp_path / "allow.txt"
    allow_list.write_text("# nothing accepted\n")
    result = audit(osv.base_url, allow_list)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "PYSEC-2026-TEST" in result.stdout + result.stderr
    assert "known vulnerabilities in the locked set" in result.stderr
    # The whole lock was asked about, at its locked versions.
    assert ("django", locked_version("django")) in osv.queried
    assert ("celery", locked_version("celery")) in osv.queried


def test_an_allow_listed_advisory_passes_with_its_reason(osv, tmp_path):
    allow_list = tmp_path / "allow.txt"
    allow_list.write_text("PYSEC-2026-TEST  # not reachable from the arena (2026-11-25)\n")
    result = audit(osv.base_url, allow_list)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no known vulnerabilities" in result.stdout + result.stderr


def test_an_unreachable_service_says_the_audit_did_not_run(tmp_path):
    with FakeOSVServer({}) as gone:
        url = gone.base_url
    result = audit(url, ROOT / "audit-allowlist.txt")
    assert result.returncode == 2
    assert "the audit did not run" in result.stderr

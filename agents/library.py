"""The voice library from ``fixtures/voice/``: the seed's ten scenarios and the agent
configurations, upserted by slug (migration 0002 and ``manage.py load_voice_library``)."""

from __future__ import annotations

from pathlib import Path

import yaml
from django.apps import apps as global_apps
from django.conf import settings

VOICE_FIXTURES = Path(settings.BASE_DIR) / "fixtures" / "voice"


def _read(name: str) -> dict:
    return yaml.safe_load((VOICE_FIXTURES / name).read_text())


def library_load(*, apps=None) -> tuple[int, int]:  # noqa: ANN001 - a migration's app registry
    """Create or update every scenario and agent configuration; returns their counts."""
    if apps is None:
        apps = global_apps
    scenario_model = apps.get_model("agents", "Scenario")
    config_model = apps.get_model("agents", "AgentConfiguration")
    scenarios = _read("scenarios.yaml")["scenarios"]
    for item in scenarios:
        scenario_model.objects.update_or_create(slug=item["slug"], defaults={
            "name": item["name"], "category": item["category"],
            "difficulty": item["difficulty"],
            "description_for_user": item["description_for_user"].strip(),
            "system_prompt": item["system_prompt"].strip(),
            "first_message": item.get("first_message", ""),
            "required_slots": item.get("required_slots", []),
            "success_criteria": item["success_criteria"].strip(),
            "tools_available": item.get("tools", []),
            "max_turns": item.get("max_turns", 10),
            "max_duration_seconds": item.get("max_duration_seconds", 120),
            "adversarial_turns": item.get("adversarial_turns", []),
        })
    configs = _read("agents.yaml")["agents"]
    for item in configs:
        config_model.objects.update_or_create(slug=item["slug"], defaults={
            "name": item["name"], "provider": item["provider"],
            "architecture_type": item.get("architecture", "cascade"),
            "components_json": item.get("components", {}),
            "config_json": item.get("config", {}),
        })
    return len(scenarios), len(configs)

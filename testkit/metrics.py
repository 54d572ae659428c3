"""Reading the arena's Prometheus metrics in tests (:mod:`arena.metrics`)."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families


def samples(text: str) -> dict[tuple, float]:
    """``{(sample name, sorted labels): value}`` of a scrape in Prometheus's text format."""
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def value(scrape: dict, name: str, **labels) -> float:
    """One sample of a scrape; 0 where it has not been counted yet."""
    return scrape.get((name, tuple(sorted(labels.items()))), 0.0)


def scraped_here() -> dict:
    """This node's metrics as /metrics gives them (every process's files, summed)."""
    from arena.metrics import metrics_text

    return samples(metrics_text()[0].decode())

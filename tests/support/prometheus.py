"""What a :class:`proxy.accounting.metrics.Metrics` renders, parsed back with prometheus_client's
own parser: ``{(sample name, sorted label pairs): value}``."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from proxy.accounting.metrics import Metrics


def samples(metrics: Metrics) -> dict[tuple[str, tuple], float]:
    out = {}
    for family in text_string_to_metric_families(metrics.render().decode()):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out

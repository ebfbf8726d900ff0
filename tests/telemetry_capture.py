"""OpenTelemetry for tests: the SDK's in-memory span exporter and metric reader, installed once per process as the
global providers (the API allows one of each), recording only inside ``capturing()`` so the rest of the suite
keeps no spans."""

from __future__ import annotations

import contextlib
import threading

from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

__all__ = ["Captured", "capturing"]


class _Gate(SpanProcessor):
    """Passes finished spans on while ``open``."""

    def __init__(self, inner: SpanProcessor) -> None:
        self.inner, self.open = inner, False

    def on_start(self, span, parent_context=None) -> None:
        pass

    def on_end(self, span: ReadableSpan) -> None:
        if self.open:
            self.inner.on_end(span)


class Captured:
    """What was recorded inside one ``capturing()`` block: ``spans`` (finished, in order) and ``metrics(name)``."""

    def __init__(self, exporter: InMemorySpanExporter, reader: InMemoryMetricReader) -> None:
        self.exporter, self.reader = exporter, reader
        self.before = _points(reader)
        self.before = {key: value for key, value in self.before.items() if value[0] != "gauge"}
        self.seen: dict = {}

    @property
    def spans(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def named(self, name: str) -> list[ReadableSpan]:
        return [s for s in self.spans if s.name == name]

    def metrics(self, name: str) -> dict[frozenset, float]:
        """Attributes → what instrument *name* gained inside the block: a counter's sum, a histogram's count of
        values, a gauge's last value (points with no change left out). A gauge is reported only by the first
        collection after it was set, so every collection is kept."""
        self.seen.update(_points(self.reader))
        found = {}
        for (metric, attrs), (kind, number) in self.seen.items():
            if metric != name:
                continue
            gained = number if kind == "gauge" else number - self.before.get((metric, attrs), (kind, 0))[1]
            if gained or kind == "gauge":
                found[attrs] = gained
        return found


def _points(reader: InMemoryMetricReader) -> dict:
    """(metric name, attributes) → (kind, value) of every point the reader collects now (a histogram's count)."""
    data = reader.get_metrics_data()
    found: dict = {}
    if data is None:
        return found
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                for point in metric.data.data_points:
                    attrs = frozenset(point.attributes.items())
                    if hasattr(point, "bucket_counts"):
                        found[(metric.name, attrs)] = ("histogram", point.count)
                    elif type(metric.data).__name__ == "Gauge":
                        found[(metric.name, attrs)] = ("gauge", point.value)
                    else:
                        found[(metric.name, attrs)] = ("counter", point.value)
    return found


_lock = threading.Lock()
_installed: list = []


def _install() -> tuple[_Gate, InMemorySpanExporter, InMemoryMetricReader]:
    with _lock:
        if not _installed:
            exporter = InMemorySpanExporter()
            gate = _Gate(SimpleSpanProcessor(exporter))
            provider = TracerProvider()
            provider.add_span_processor(gate)
            trace.set_tracer_provider(provider)
            reader = InMemoryMetricReader()
            metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
            _installed.append((gate, exporter, reader))
        return _installed[0]


@contextlib.contextmanager
def capturing(azure_sdk: bool = True):
    """Record spans and metrics inside the block (yields a ``Captured``); with *azure_sdk*, the Azure SDK calls
    are traced too (azure-core's OpenTelemetry plugin, as ``configure_telemetry`` turns it on)."""
    from azure.core.settings import settings as azure_settings

    gate, exporter, reader = _install()
    exporter.clear()
    captured = Captured(exporter, reader)
    before = azure_settings.tracing_implementation()
    if azure_sdk:
        azure_settings.tracing_implementation = "opentelemetry"
    gate.open = True
    try:
        yield captured
    finally:
        gate.open = False
        azure_settings.tracing_implementation = before

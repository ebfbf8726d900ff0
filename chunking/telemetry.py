"""Traces and metrics through the OpenTelemetry API alone: spans, the W3C trace context carried in queue messages,
and the pipeline's instruments (docs/operations.md#telemetry).

Nothing here chooses an exporter. Until a provider is installed (``chunking.services.configure_telemetry``: the
Azure Monitor distro when ``APPLICATIONINSIGHTS_CONNECTION_STRING`` is set, OTLP when
``OTEL_EXPORTER_OTLP_ENDPOINT`` is, nothing otherwise) every span and instrument is the API's no-op, so a process
without telemetry pays for the import of ``opentelemetry-api`` and little else. Only the API is imported: the SDK,
the exporters and the distro are imported by ``configure_telemetry`` when one is chosen.

One trace per document version: stage 1 starts it (``chunking.stage_one``), writes its context into every chunk-batch
message and page-range job (``carrier``), and stage 2 continues it for each batch (``chunking.stage_two``, a child
of the stage-1 span read back with ``context_from``), completion included (``chunking.complete``). The Azure SDK
calls made inside these spans become their children once azure-core's OpenTelemetry tracing is on.

Attribute values pass through ``chunking.redact.redact``: a secret inside a reason or a path never reaches a
span. The trace context follows the W3C Trace Context recommendation (``traceparent``, ``tracestate``), through the
API's own ``TraceContextTextMapPropagator``.

May import: redact.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any, Iterator, Mapping

from opentelemetry import metrics, trace
from opentelemetry.trace import Span, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from chunking.redact import redact

__all__ = ["INSTRUMENTS", "NAME", "Instruments", "attributes", "carrier", "context_from", "instruments", "record",
           "set_attributes", "span"]

#: The instrumentation scope of every span and instrument of the pipeline.
NAME = "chunking"

_PROPAGATOR = TraceContextTextMapPropagator()
_CARRIER_KEYS = ("traceparent", "tracestate")
_MAX_ATTRIBUTE_CHARS = 1000

#: name → (kind, unit, description) of each instrument (docs/operations.md#metrics lists them).
INSTRUMENTS: dict[str, tuple[str, str, str]] = {
    "chunking.documents": ("counter", "{document}", "document versions that reached an outcome (attribute "
                           "chunking.outcome: indexed, failed, deleted, skipped)"),
    "chunking.upload_to_indexed": ("histogram", "s", "from the blob's last modification to its version indexed"),
    "chunking.stage.duration": ("histogram", "s", "one stage-1 run or one stage-2 batch (attribute chunking.stage)"),
    "chunking.pages": ("counter", "{page}", "pages read by stage 1"),
    "chunking.chunks": ("counter", "{chunk}", "chunks made by stage 1"),
    "chunking.embedding.tokens": ("counter", "{token}", "tokens sent to the embedding service"),
    "chunking.embedding.requests": ("counter", "{request}", "embedding requests sent"),
    "chunking.throttling.deferrals": ("counter", "{batch}", "chunk batches put back on the queue after a 429/503"),
    "chunking.throttling.delay": ("histogram", "s", "the visibility delay of each deferred batch"),
    "chunking.poison": ("counter", "{message}", "messages that failed every delivery (attribute chunking.queue)"),
    "chunking.failures": ("counter", "{failure}", "failed attempts by stage and kind (attributes chunking.stage, "
                          "chunking.failure_kind: transient or permanent)"),
    "chunking.docintel.pages": ("counter", "{page}", "pages analysed by Document Intelligence"),
    "chunking.vision.calls": ("counter", "{request}", "requests to a vision model (figure descriptions), by the "
                              "client that makes them"),
    "chunking.queue.depth": ("gauge", "{message}", "approximate messages waiting, read by reconcile (attribute "
                             "chunking.queue)"),
    "chunking.ledger.documents": ("gauge", "{document}", "ledger entries by status, counted by reconcile "
                                  "(attribute chunking.status)"),
    "chunking.reconcile": ("gauge", "{document}", "what the last reconcile run found (attribute chunking.found: "
                           "checked, missing, stuck, retried, orphaned, swept, backfilled, backfill_left, failed)"),
}


class Instruments:
    """The instruments of ``INSTRUMENTS`` made on one meter provider (``None``: the global one, a no-op until a
    provider is installed; the API's proxies follow a provider installed later)."""

    def __init__(self, provider: Any = None) -> None:
        meter = (provider or metrics.get_meter_provider()).get_meter(NAME)
        makers = {"counter": meter.create_counter, "histogram": meter.create_histogram,
                  "gauge": meter.create_gauge}
        self.by_name = {name: makers[kind](name, unit=unit, description=text)
                        for name, (kind, unit, text) in INSTRUMENTS.items()}


_lock = threading.Lock()
_instruments: Instruments | None = None


def instruments() -> Instruments:
    """The process's instruments on the global meter provider, made on first use."""
    global _instruments
    with _lock:
        if _instruments is None:
            _instruments = Instruments()
        return _instruments


def record(name: str, value: float, **attrs: Any) -> None:
    """Add *value* to the counter, record it in the histogram, or set the gauge *name* (a key of ``INSTRUMENTS``),
    with *attrs* as attributes (``queue="chunk-batches"`` → ``chunking.queue``). A value of 0 is recorded too.

    Raises:
        KeyError: *name* is not an instrument of ``INSTRUMENTS``.
    """
    instrument = instruments().by_name[name]
    kind = INSTRUMENTS[name][0]
    labels = attributes(**attrs)
    if kind == "counter":
        instrument.add(value, labels)
    elif kind == "histogram":
        instrument.record(value, labels)
    else:
        instrument.set(value, labels)


def attributes(**values: Any) -> dict[str, Any]:
    """Span or metric attributes from keyword arguments: each name gets the ``chunking.`` prefix (``doc_id`` →
    ``chunking.doc_id``), ``None`` and ``""`` are left out, strings are redacted and cut to 1,000 characters, and
    other values than str, bool, int and float become strings."""
    found: dict[str, Any] = {}
    for key, value in values.items():
        if value is None or value == "":
            continue
        if not isinstance(value, (bool, int, float)):
            value = redact(str(value))[:_MAX_ATTRIBUTE_CHARS]
        found[f"{NAME}.{key}"] = value
    return found


def _tracer() -> trace.Tracer:
    return trace.get_tracer(NAME)


@contextlib.contextmanager
def span(name: str, *, parent: Mapping[str, str] | None = None, join: bool = False, **attrs: Any) -> Iterator[Span]:
    """A span named *name*, current inside the ``with`` block, with *attrs* (``attributes``). *parent*: a carrier
    read from a message (``context_from``): the span continues that trace; without one it is a child of the
    current span, or the root of a new trace. *join*: when the current span already has this name (a caller
    opened it to include its own work, e.g. the blob download before stage 1), that span is used instead of a
    new child. An exception leaving the block marks the span as an error (type and redacted message, no
    traceback text) and propagates.

    Set more attributes inside the block with ``set_attributes(span, **attrs)``."""
    current = trace.get_current_span()
    if join and current.is_recording() and getattr(current, "name", None) == name:
        current.set_attributes(attributes(**attrs))
        yield current
        return
    context = context_from(parent) if parent else None
    with _tracer().start_as_current_span(name, context=context, attributes=attributes(**attrs),
                                         record_exception=False, set_status_on_exception=False) as current:
        try:
            yield current
        except BaseException as exc:
            current.set_status(Status(StatusCode.ERROR, redact(f"{type(exc).__name__}: {exc}")[:_MAX_ATTRIBUTE_CHARS]))
            current.set_attribute("exception.type", type(exc).__name__)
            raise


def set_attributes(current: Span, **attrs: Any) -> None:
    """Add *attrs* (``attributes``) to *current*."""
    current.set_attributes(attributes(**attrs))


def carrier() -> dict[str, str]:
    """The current trace context as a W3C carrier, ``{"traceparent": "00-<trace>-<span>-01"[, "tracestate": …]}``,
    to be written into a queue message; ``{}`` when no span is recording (telemetry off), so a message carries
    nothing it does not need."""
    found: dict[str, str] = {}
    if trace.get_current_span().get_span_context().is_valid:
        _PROPAGATOR.inject(found)
    return {key: found[key] for key in _CARRIER_KEYS if key in found}


def context_from(data: Any) -> Any:
    """The OpenTelemetry context of a carrier read from a message (``carrier``'s output; anything else, or a
    malformed ``traceparent``, gives an empty context: the span then starts a new trace)."""
    if not isinstance(data, Mapping):
        return None
    clean = {key: data[key] for key in _CARRIER_KEYS if isinstance(data.get(key), str)}
    return _PROPAGATOR.extract(clean) if clean else None

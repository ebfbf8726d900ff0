"""chunking.telemetry and services.configure_telemetry: attributes redacted and prefixed, the W3C carrier written
and read back (a malformed one starts a new trace), every instrument recorded with its kind, the exporter chosen
by the settings, the Document Intelligence page counter, and W3C context in a stage-1 job (optional)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from chunking import telemetry
from chunking.messages.jobs import StageOneJob, decode_job, encode_job
from chunking.redact import register_secret
from tests.telemetry_capture import capturing

ROOT = Path(__file__).resolve().parents[1]


def test_attributes_are_prefixed_redacted_cut_and_empty_ones_left_out():
    register_secret("s3cr3t-value-42")
    got = telemetry.attributes(path="a/b.pdf", pages=3, ok=True, ratio=0.5, reason="key s3cr3t-value-42 refused",
                               empty="", none=None, long="x" * 1500, url="https://a.blob.core.windows.net/c?sig=abc")
    assert got == {"chunking.path": "a/b.pdf", "chunking.pages": 3, "chunking.ok": True, "chunking.ratio": 0.5,
                   "chunking.reason": "key *** refused", "chunking.long": "x" * 1000,
                   "chunking.url": "https://a.blob.core.windows.net/c?sig=***"}


def test_the_carrier_is_empty_without_a_recording_span():
    assert telemetry.carrier() == {}  # telemetry off: nothing to write into a message
    assert telemetry.context_from(None) is None and telemetry.context_from("00-x") is None


def test_a_span_continues_the_trace_of_its_carrier_and_a_malformed_one_starts_anew():
    with capturing(azure_sdk=False) as got:
        with telemetry.span("chunking.stage_one", doc_id="d1") as first:
            carrier = telemetry.carrier()
        with telemetry.span("chunking.stage_two", parent=carrier):
            pass
        with telemetry.span("chunking.stage_two", parent={"traceparent": "00-zz-yy-01"}):
            pass
        with pytest.raises(ValueError):
            with telemetry.span("chunking.complete", parent=carrier):
                raise ValueError("AccountKey=abcdefgh1234 refused")
    one, two, orphan, failed = got.spans
    assert carrier == {"traceparent": f"00-{one.context.trace_id:032x}-{one.context.span_id:016x}-"
                                      f"{carrier['traceparent'][-2:]}"}
    assert (two.parent.span_id, two.context.trace_id) == (one.context.span_id, one.context.trace_id)
    assert orphan.parent is None and orphan.context.trace_id != one.context.trace_id
    assert failed.status.status_code.name == "ERROR"
    assert failed.status.description == "ValueError: AccountKey=*** refused"
    assert dict(failed.attributes) == {"exception.type": "ValueError"} and not failed.events  # no traceback text
    assert dict(one.attributes) == {"chunking.doc_id": "d1"} and first is not None


def test_join_uses_the_open_span_of_the_same_name():
    with capturing(azure_sdk=False) as got:
        with telemetry.span("chunking.stage_one", path="a.txt"):
            with telemetry.span("chunking.stage_one", join=True, version="v1"):
                pass
            with telemetry.span("chunking.stage_two", join=True):
                pass
    assert [s.name for s in got.spans] == ["chunking.stage_two", "chunking.stage_one"]
    assert dict(got.spans[1].attributes) == {"chunking.path": "a.txt", "chunking.version": "v1"}


def test_every_instrument_records_with_its_kind():
    with capturing(azure_sdk=False) as got:
        for name, (kind, _, _) in telemetry.INSTRUMENTS.items():
            telemetry.record(name, 2, queue="q")
    for name, (kind, unit, text) in telemetry.INSTRUMENTS.items():
        # a histogram counts one value; a counter adds 2; a gauge holds 2
        assert got.metrics(name) == {frozenset({("chunking.queue", "q")}): 1 if kind == "histogram" else 2}, name
        assert unit and len(text) > 10
    with pytest.raises(KeyError):
        telemetry.record("chunking.nothing", 1)


def test_a_stage_one_job_carries_trace_context_only_when_traced():
    plain = StageOneJob("docs", "a.pdf", reason="reconcile")
    assert "trace" not in encode_job(plain) and decode_job(encode_job(plain)) == plain
    traced = StageOneJob("docs", "a.pdf", trace={"traceparent": "00-" + "1" * 32 + "-" + "2" * 16 + "-01"})
    assert decode_job(encode_job(traced)).trace == traced.trace
    # A job of an older sender (no field) and a malformed field both decode, without trace context.
    assert decode_job('{"type":"stage-one","schema":1,"container":"docs","path":"a.pdf","trace":7}').trace == {}


def test_document_intelligence_pages_are_counted():
    from chunking.parsers import parse_document
    from chunking.services import document_readers
    from chunking.settings import Settings
    from tests.docintel_fake import ENDPOINT, DocumentIntelligenceFake, LayoutDocument, Para

    fake = DocumentIntelligenceFake(LayoutDocument(pages=[[Para(f"Scanned page {n}.")] for n in range(3)]))
    settings = Settings.from_env({"DOCUMENT_INTELLIGENCE_ENDPOINT": ENDPOINT,
                                  "DOCUMENT_INTELLIGENCE_API_KEY": "test-key"})
    with capturing(azure_sdk=False) as got:
        pages = list(parse_document(b"\x89PNG\r\n\x1a\n", source="scan.png",
                                    readers=document_readers(settings, transport=fake)))
    assert len(pages) == 3 and got.metrics("chunking.docintel.pages") == {frozenset(): 3}


def _configure(env: dict[str, str]) -> str:
    """configure_telemetry in a fresh interpreter (the global providers are set once per process), exiting
    without flushing so no exporter sends anything: what it chose, and the providers and tracing plugin."""
    code = ("import os, json; from chunking.services import configure_telemetry; from chunking.settings import "
            "Settings\nfrom opentelemetry import trace, metrics; from azure.core.settings import settings as a\n"
            "choice = configure_telemetry(Settings.from_env())\n"
            "print(json.dumps([choice, type(trace.get_tracer_provider()).__name__, "
            "type(metrics.get_meter_provider()).__name__, bool(a.tracing_implementation()), "
            "configure_telemetry(Settings.from_env()), __import__('opentelemetry.instrumentation.httpx', fromlist=['x'])"
            ".HTTPXClientInstrumentor().is_instrumented_by_opentelemetry]), flush=True); os._exit(0)")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), **env})
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_no_exporter_without_settings_and_otlp_with_an_endpoint():
    assert _configure({}) == '["none", "ProxyTracerProvider", "_ProxyMeterProvider", false, "none", false]'
    assert _configure({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"}) == (
        '["otlp", "TracerProvider", "MeterProvider", true, "otlp", true]')


def test_the_azure_monitor_distro_gets_the_connection_string(monkeypatch):
    import azure.monitor.opentelemetry as distro

    from chunking import services
    from chunking.settings import Settings, SettingsError

    calls = []
    monkeypatch.setattr(distro, "configure_azure_monitor", lambda **kw: calls.append(kw))
    monkeypatch.setattr(services, "_telemetry", [])
    connection = "InstrumentationKey=00000000-0000-0000-0000-000000000000;IngestionEndpoint=http://127.0.0.1:9/"
    settings = Settings.from_env({"APPLICATIONINSIGHTS_CONNECTION_STRING": connection,
                                  "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"})
    assert services.configure_telemetry(settings) == "azure_monitor"  # the distro wins over OTLP
    assert calls == [{"connection_string": connection, "disable_logging": True}]
    monkeypatch.setattr(services, "_telemetry", [])
    calls.clear()
    entra = Settings.from_env({"APPLICATIONINSIGHTS_CONNECTION_STRING": connection,
                               "APPLICATIONINSIGHTS_AUTHENTICATION_STRING": "ClientId=1234-abcd;Authorization=AAD"})
    assert services.configure_telemetry(entra) == "azure_monitor"
    [call] = calls
    assert type(call["credential"]).__name__ == "ManagedIdentityCredential"
    assert Settings.from_env({"APPLICATIONINSIGHTS_AUTHENTICATION_STRING": "Authorization=AAD"}
                             ).observability.app_insights_client_id == ""  # the system-assigned identity
    assert Settings.from_env({}).observability.app_insights_client_id is None
    with pytest.raises(SettingsError, match="OTEL_EXPORTER_OTLP_ENDPOINT must be an http"):
        Settings.from_env({"OTEL_EXPORTER_OTLP_ENDPOINT": "localhost:4318"})

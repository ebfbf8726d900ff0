"""Settings of what the pipeline tells the outside: where its traces and metrics go, and where completion events
are published (docs/operations.md#telemetry, docs/events.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from .values import SettingsError, str_value

__all__ = ["EVENTS_QUEUE_DEFAULT", "ObservabilityOptions"]

#: The local queue completion events go to when no Event Grid namespace is set, and the namespace topic's default.
EVENTS_QUEUE_DEFAULT = "document-events"


@dataclass(frozen=True)
class ObservabilityOptions:
    """``APPLICATIONINSIGHTS_CONNECTION_STRING`` ['']: traces and metrics go to Application Insights through the
    Azure Monitor OpenTelemetry distro; ``OTEL_EXPORTER_OTLP_ENDPOINT`` ['']: otherwise to this OTLP/HTTP endpoint
    (neither: no telemetry). ``COMPLETION_EVENTS_ENDPOINT`` ['']: the Event Grid namespace endpoint completion
    events are published to, on its topic ``COMPLETION_EVENTS_TOPIC`` [``document-events``] (keyless, with the
    process's identity, unless ``COMPLETION_EVENTS_KEY`` ['']); otherwise they go to the storage queue
    ``COMPLETION_EVENTS_QUEUE`` [``document-events``] when the ledger is in storage."""

    app_insights_connection: str = ""
    otlp_endpoint: str = ""
    events_endpoint: str = ""
    events_key: str = ""
    events_queue: str = EVENTS_QUEUE_DEFAULT
    events_topic: str = EVENTS_QUEUE_DEFAULT

    @property
    def exporter(self) -> str:
        """``azure_monitor``, ``otlp`` or ``none``: which exporter the settings choose."""
        return "azure_monitor" if self.app_insights_connection else "otlp" if self.otlp_endpoint else "none"

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> "ObservabilityOptions":
        """Read the variables of the class docstring from *env*.

        Raises:
            SettingsError: an endpoint is not an http(s) URL (the message names the variable).
        """
        values = cls(app_insights_connection=str_value(env, "APPLICATIONINSIGHTS_CONNECTION_STRING"),
                     otlp_endpoint=str_value(env, "OTEL_EXPORTER_OTLP_ENDPOINT"),
                     events_endpoint=str_value(env, "COMPLETION_EVENTS_ENDPOINT"),
                     events_key=str_value(env, "COMPLETION_EVENTS_KEY"),
                     events_queue=str_value(env, "COMPLETION_EVENTS_QUEUE", EVENTS_QUEUE_DEFAULT),
                     events_topic=str_value(env, "COMPLETION_EVENTS_TOPIC", EVENTS_QUEUE_DEFAULT))
        for name, url in (("OTEL_EXPORTER_OTLP_ENDPOINT", values.otlp_endpoint),
                          ("COMPLETION_EVENTS_ENDPOINT", values.events_endpoint)):
            if url and not url.lower().startswith(("https://", "http://")):
                raise SettingsError(f"{name} must be an http(s) URL, got {url!r}")
        if values.app_insights_connection and "instrumentationkey=" not in values.app_insights_connection.lower():
            raise SettingsError("APPLICATIONINSIGHTS_CONNECTION_STRING must hold an InstrumentationKey=…")
        return values

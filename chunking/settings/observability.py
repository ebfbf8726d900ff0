"""Settings of what the pipeline tells the outside: where its traces and metrics go, and where completion events
are published (docs/operations.md#telemetry, docs/events.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from .values import SettingsError, str_value

__all__ = ["EVENTS_QUEUE_DEFAULT", "ObservabilityOptions"]

#: The local queue completion events go to without an Event Grid namespace; also the namespace topic's default.
EVENTS_QUEUE_DEFAULT = "document-events"


@dataclass(frozen=True)
class ObservabilityOptions:
    """``APPLICATIONINSIGHTS_CONNECTION_STRING`` ['']: traces and metrics go to Application Insights through the
    Azure Monitor OpenTelemetry distro, with Entra ID when ``APPLICATIONINSIGHTS_AUTHENTICATION_STRING`` says
    ``Authorization=AAD`` (``ClientId=…``: that user-assigned identity; ``app_insights_client_id`` is then the
    client id, ``""`` for the system-assigned identity, ``None`` without Entra ID), as the Functions host reads it;
    ``OTEL_EXPORTER_OTLP_ENDPOINT`` ['']: otherwise to this OTLP/HTTP endpoint (neither: no telemetry). ``COMPLETION_EVENTS_ENDPOINT`` ['']: the Event Grid namespace endpoint completion
    events are published to, on its topic ``COMPLETION_EVENTS_TOPIC`` [``document-events``] (keyless, with the
    process's identity, unless ``COMPLETION_EVENTS_KEY`` ['']); otherwise they go to the storage queue
    ``COMPLETION_EVENTS_QUEUE`` [``document-events``] when the ledger is in storage."""

    app_insights_connection: str = ""
    app_insights_client_id: str | None = None
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
            SettingsError: the OTLP endpoint is not an http(s) URL (the message names the variable).
        """
        authentication = dict(part.split("=", 1) for part in str_value(
            env, "APPLICATIONINSIGHTS_AUTHENTICATION_STRING").split(";") if "=" in part)
        client_id = authentication.get("ClientId", "") if authentication.get("Authorization") == "AAD" else None
        values = cls(app_insights_connection=str_value(env, "APPLICATIONINSIGHTS_CONNECTION_STRING"),
                     app_insights_client_id=client_id,
                     otlp_endpoint=str_value(env, "OTEL_EXPORTER_OTLP_ENDPOINT"),
                     events_endpoint=str_value(env, "COMPLETION_EVENTS_ENDPOINT"),
                     events_key=str_value(env, "COMPLETION_EVENTS_KEY"),
                     events_queue=str_value(env, "COMPLETION_EVENTS_QUEUE", EVENTS_QUEUE_DEFAULT),
                     events_topic=str_value(env, "COMPLETION_EVENTS_TOPIC", EVENTS_QUEUE_DEFAULT))
        if values.otlp_endpoint and not values.otlp_endpoint.lower().startswith(("https://", "http://")):
            raise SettingsError(f"OTEL_EXPORTER_OTLP_ENDPOINT must be an http(s) URL, got {values.otlp_endpoint!r}")
        return values

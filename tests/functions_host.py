"""What the Functions host hands a function, built by hand for tests (see reference/azure-functions.md §4.2)."""

from __future__ import annotations

import datetime as dt

import azure.functions as func
from azure.functions.queue import QueueMessage


class FakeOut(func.Out):
    """An output binding that keeps what the function set."""

    def __init__(self) -> None:
        self.value = None

    def set(self, val) -> None:
        self.value = val

    def get(self):
        return self.value


def queue_message(body: str, dequeue_count: int = 1) -> QueueMessage:
    """A queue message as the worker builds it, with its metadata."""
    now = dt.datetime.now(dt.timezone.utc)
    return QueueMessage(id="m", body=body.encode("utf-8"), dequeue_count=dequeue_count, insertion_time=now,
                        expiration_time=now, time_next_visible=now, pop_receipt="r")

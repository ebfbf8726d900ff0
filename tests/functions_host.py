"""What the Functions host does with the app, done by hand for tests: index it, hand a function a queue message,
stand in for the queue the blob function sends to."""

from __future__ import annotations

import datetime as dt

from azure.functions.queue import QueueMessage


class RecordingQueue:
    """Stands in for the chunk-batch queue of the Functions (``chunking.services.make_batch_queue``): passes messages
    on to *inner* (a real ``QueueSender``, or nothing) and keeps every message sent, in order, in ``sent``."""

    def __init__(self, inner=None) -> None:
        self.inner = inner
        self.sent: list[str] = []

    def send(self, messages, visibility_timeout=None) -> None:
        if self.inner is not None:
            if visibility_timeout:
                self.inner.send(messages, visibility_timeout=visibility_timeout)
            else:
                self.inner.send(messages)
        self.sent.extend(messages)


def record_batches(monkeypatch, *, forward: bool = True) -> list[RecordingQueue]:
    """Patch ``chunking.services.make_batch_queue`` so the queues it makes record what they send (and send it
    to the real queue when *forward*); returns the list of queues made, newest last."""
    from chunking import services

    made: list[RecordingQueue] = []
    real = services.make_batch_queue

    def make(settings):
        made.append(RecordingQueue(real(settings) if forward else None))
        return made[-1]

    monkeypatch.setattr(services, "make_batch_queue", make)
    return made


def queue_message(body: str, dequeue_count: int = 1) -> QueueMessage:
    """A queue message as the worker builds it, with its metadata."""
    now = dt.datetime.now(dt.timezone.utc)
    return QueueMessage(id="m", body=body.encode("utf-8"), dequeue_count=dequeue_count, insertion_time=now,
                        expiration_time=now, time_next_visible=now, pop_receipt="r")


def index_app(env: dict[str, str]) -> dict[str, list[dict]]:
    """The bindings of every function of ``function_app`` as the Python worker indexes them, in a fresh
    interpreter whose environment is exactly *env* (the app settings): ``{function name: bindings}``."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    script = ("import json, function_app\n"
              "print(json.dumps({f.get_function_name(): json.loads(f.get_function_json())['bindings']"
              " for f in function_app.app.get_functions()}))")
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, "-c", script], cwd=root, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)

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

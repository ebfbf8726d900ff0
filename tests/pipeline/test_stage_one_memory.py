"""Stage 1's memory is bounded by the page, not by the document: six times the pages of a PDF read from a local
file (as the Functions path reads a blob) cost no more than the extra bytes of the file and a few MB, while the
same document held as one ``bytes`` with its messages (the in-memory path) costs much more. Measured with
the peak RSS of fresh processes (reset after imports); no time is asserted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_SCRIPT = r"""
import hashlib, json, sys
from pathlib import Path

from chunking.storage.claim_check import MemoryPayloadStore
from chunking.services import make_ledger
from chunking.pipeline.stage_two import run_stage_one
from chunking.settings import Settings
from chunking.splitters import SentenceTextSplitter
from chunking.storage import BlobFile
from chunking.documents.language import detect_language

path, mode = Path(sys.argv[1]), sys.argv[2]
settings = Settings.from_env({"CHUNKING_STATE_DIR": str(path.parent / mode), "MAX_DOCUMENT_CHARS": "100000000"})
list(SentenceTextSplitter().split_text("Warm-up. The tokenizer tables are built once per process."))
detect_language(["Warm-up: the language model is loaded once per process, before the peak is reset."])
# Imports may peak higher than what follows (a model inflated once): the peak is reset here (Linux:
# clear_refs 5), so the peak after the run is this document's.
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")


def peak_kib() -> int:  # the process's peak RSS (VmHWM: ru_maxrss also keeps the peaks of exited threads)
    return int(next(line for line in open("/proc/self/status") if line.startswith("VmHWM")).split()[1])


baseline = peak_kib()
sent = []
if mode == "file":
    local = BlobFile(path, path.stat().st_size, hashlib.sha256(path.read_bytes()).hexdigest(), "")
    result = run_stage_one(local, source="long.pdf", container="c", settings=settings, payloads=MemoryPayloadStore(),
                           ledger=make_ledger(settings), send=lambda messages: sent.append(len(messages)))
else:
    result = run_stage_one(path.read_bytes(), source="long.pdf", container="c", settings=settings,
                           payloads=MemoryPayloadStore(), ledger=make_ledger(settings))
growth_mb = (peak_kib() - baseline) / 1024
print(json.dumps({"growth_mb": growth_mb, "chunks": result.chunks, "pages": result.pages, "error": result.error,
                  "sent": sum(sent), "sends": len(sent)}))
"""


def _stage_one(path: Path, mode: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AZURE_", "OPENAI_", "AzureWebJobs"))}
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run([sys.executable, "-c", _SCRIPT, str(path), mode], env=env, capture_output=True, text=True,
                          timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


def test_six_times_the_pages_cost_only_their_bytes(tmp_path):
    from tests.long_documents import long_pdf

    small, large = tmp_path / "small.pdf", tmp_path / "large.pdf"
    small.write_bytes(long_pdf(200, lines=30))
    large.write_bytes(long_pdf(1200, lines=30))
    a, b = _stage_one(small, "file"), _stage_one(large, "file")
    assert (a["error"], b["error"], a["pages"], b["pages"]) == (None, None, 200, 1200)
    assert b["chunks"] > 5 * a["chunks"] and b["sends"] > 3 and b["sent"] > 40  # sent as they filled
    extra_bytes_mb = (large.stat().st_size - small.stat().st_size) / 2**20
    bound_mb = extra_bytes_mb + 5
    assert b["growth_mb"] - a["growth_mb"] <= bound_mb, (a, b, bound_mb)
    # The bound is tight enough to fail: the whole document in memory with its messages does not meet it.
    whole = _stage_one(large, "bytes")
    assert whole["chunks"] == b["chunks"]
    assert whole["growth_mb"] - a["growth_mb"] > bound_mb, (a, whole, bound_mb)

"""Peak memory and seconds of stage 1 on the Functions path, for ×1, ×4, ×16 a corpus PDF.

A plain script, run by hand (never collected by pytest); it starts its own Azurite on free 127.0.0.1 ports::

    .venv/bin/python benchmarks/stage_one_memory.py [--scales 1 4 16] [--pages-per-job 500]

The input is the English AMC manual scaled up as ``pipeline_bench.py`` does it: ×k is the manual's pages then
k - 1 copies with the words of every page shuffled (distinct text), written as a plain PDF. Each run is a fresh
worker process (peak RSS is per process) that builds the app's services, warms the tokenizer up,
resets its peak RSS (Linux ``/proc/self/clear_refs``: imports peak higher than what follows) and records it
(the baseline), and then runs one of two paths:

- ``functions``: what the Functions host runs for an upload: ``function_app.ingest_document`` with the blob's
  ``BlobClient`` (the SDK-type binding), sending its batches to the Azurite queue, then ``run_stage_one_job``
  for every page-range job it enqueued, until the job queue is empty;
- ``in memory``: the same document as one ``bytes`` through ``run_stage_one`` without a queue, its messages
  returned (what stage 1 did before it streamed, and what ``chunking ingest`` still does in one process).

Both paths parse as the app does (``PARSE_ISOLATION=process``): every page range is read by a child process of
the parse server, which passes the pages back one at a time. Growth is the worker's peak minus its baseline;
*child peak* is the largest peak RSS of a parsing child (its whole resident set, the parse server's imported
parsers included: what ``chunking.parsers.sandbox`` logs for each child). The target is the issue's: at most 2× the
PDF's bytes + 100 MB, compared with growth + child peak.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus_pages import ROOT  # noqa: E402
from pipeline_bench import base_pages, distinct_copies, write_pdf  # noqa: E402
from bench_args import at_least  # noqa: E402

MB = 1024 * 1024
_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


def _peak_mb() -> float:
    """Peak RSS: ``VmHWM`` of /proc/self/status, which the reset below clears (``resource``'s ru_maxrss keeps the
    peaks of exited threads too, and cannot be reset)."""
    with open("/proc/self/status") as status:
        return int(next(line for line in status if line.startswith("VmHWM")).split()[1]) / 1024


def worker(mode: str, path: str, blob_name: str) -> dict:
    """One run in this process; returns the figures (printed as JSON by ``--worker``)."""
    import function_app  # noqa: F401  (indexes the app as the host would)
    from chunking.app import functions as handlers
    from chunking.documents.language import detect_language
    from chunking.splitters import SentenceTextSplitter

    s = handlers.services()
    list(SentenceTextSplitter().split_text("Warm-up. The tokenizer tables are built once per process."))
    detect_language(["Warm-up: the language model is loaded once per process, before the peak is reset."])
    children = _ChildPeaks()
    logging.getLogger("chunking.parsers.sandbox").addHandler(children)
    logging.getLogger("chunking.parsers.sandbox").setLevel(logging.DEBUG)
    with open("/proc/self/clear_refs", "w") as f:  # Linux: the peak so far (imports) is forgotten
        f.write("5")
    out = {"baseline_mb": _peak_mb()}
    started = time.perf_counter()
    if mode == "functions":
        from azure.storage.queue import QueueClient, TextBase64DecodePolicy, TextBase64EncodePolicy

        from tests.functions_host import queue_message

        container = handlers.blob_service(s.settings).get_container_client(s.settings.documents_container)
        function_app.ingest_document(container.get_blob_client(blob_name))
        jobs = QueueClient.from_connection_string(
            os.environ["AzureWebJobsStorage"], s.settings.stage_one.job_queue,
            message_encode_policy=TextBase64EncodePolicy(), message_decode_policy=TextBase64DecodePolicy())
        from chunking.storage import create_queue

        create_queue(jobs)  # a document of one range enqueued nothing
        invocations = 1
        while True:
            received = list(jobs.receive_messages(messages_per_page=1, visibility_timeout=300))
            if not received:
                break
            for m in received:
                function_app.run_stage_one_job(queue_message(m.content, m.dequeue_count))
                jobs.delete_message(m)
                invocations += 1
        entry = s.ledger.get(next(e.doc_id for e in s.ledger.entries() if e.source == blob_name))
        out.update(invocations=invocations, chunks=entry.chunk_count, batches=entry.batch_count, status=entry.status)
    else:
        from chunking.pipeline.stage_two import run_stage_one

        data = Path(path).read_bytes()
        result = run_stage_one(data, source=blob_name, container=s.settings.documents_container,
                               settings=s.settings, payloads=s.payloads, ledger=s.ledger)
        out.update(invocations=1, chunks=result.chunks, batches=len(result.messages), status=result.outcome)
    out["seconds"] = time.perf_counter() - started
    out["peak_mb"] = _peak_mb()
    out["child_peak_mb"] = children.peak_mb
    return out


class _ChildPeaks(logging.Handler):
    """The largest child peak RSS that ``chunking.parsers.sandbox`` logs ("… peak RSS N MB"), in MB."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.peak_mb = 0.0

    def emit(self, record: logging.LogRecord) -> None:
        found = re.search(r"peak RSS (\d+) MB", record.getMessage())  # the message, as redaction left it
        if found:
            self.peak_mb = max(self.peak_mb, float(found.group(1)))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _azurite(workdir: Path) -> tuple[subprocess.Popen, str]:
    binary = ROOT / "node_modules" / ".bin" / "azurite"
    if not binary.exists():
        sys.exit("azurite not installed: run `make setup` (npm ci) first")
    ports = [_free_port() for _ in range(3)]
    proc = subprocess.Popen([str(binary), "--blobHost", "127.0.0.1", "--blobPort", str(ports[0]), "--queueHost",
                             "127.0.0.1", "--queuePort", str(ports[1]), "--tableHost", "127.0.0.1", "--tablePort",
                             str(ports[2]), "--location", str(workdir), "--skipApiVersionCheck", "--loose",
                             "--silent", "--disableTelemetry"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for port in ports:
        for _ in range(300):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.1)
    base = "http://127.0.0.1:{}/devstoreaccount1"
    return proc, (f"DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey={_KEY};"
                  f"BlobEndpoint={base.format(ports[0])};QueueEndpoint={base.format(ports[1])};"
                  f"TableEndpoint={base.format(ports[2])};")


def _run(mode: str, path: Path, blob_name: str, env: dict) -> dict:
    done = subprocess.run([sys.executable, __file__, "--worker", json.dumps([mode, str(path), blob_name])],
                          capture_output=True, text=True, cwd=ROOT, env=env)
    if done.returncode != 0:
        sys.exit(f"worker failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--scales", type=at_least(1), nargs="+", default=[1, 4, 16], help="scale-ups of the manual")
    parser.add_argument("--pages-per-job", type=at_least(1), default=500, help="STAGE1_PAGES_PER_JOB")
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(*json.loads(args.worker))))
        return
    from azure.storage.blob import BlobServiceClient

    pages = base_pages()
    print("| input | pages | PDF MB | path | invocations | chunks | seconds | baseline RSS MB | peak RSS MB | "
          "growth MB | child peak MB | target MB (2× bytes + 100) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        proc, connection = _azurite(Path(tmp) / "azurite")
        try:
            container = BlobServiceClient.from_connection_string(connection).get_container_client("bench")
            container.create_container()
            for scale in args.scales:
                copies = distinct_copies(pages, scale)
                pdf = Path(tmp) / f"manual-x{scale}.pdf"
                write_pdf(copies, pdf)
                with open(pdf, "rb") as f:
                    container.upload_blob(pdf.name, f, overwrite=True)
                size_mb = pdf.stat().st_size / MB
                for mode in ("functions", "in memory"):
                    state = Path(tmp) / f"state-{scale}-{mode.replace(' ', '')}"
                    env = {k: v for k, v in os.environ.items() if not k.startswith(("AZURE_", "OPENAI_"))}
                    env.update(AzureWebJobsStorage=connection, DOCUMENTS_CONTAINER="bench",
                               CHUNK_BATCH_QUEUE=f"batches-{scale}-{len(mode)}", STAGE1_JOB_QUEUE=f"jobs-{scale}",
                               LEDGER_TABLE=f"ledger{scale}{len(mode)}", CHUNKING_STATE_DIR=str(state),
                               PAYLOAD_CONTAINER=f"payloads-{scale}-{len(mode)}",
                               STAGE1_PAGES_PER_JOB=str(args.pages_per_job),
                               MAX_PAGES=str(max(5000, len(copies))), MAX_DOCUMENT_CHARS="1000000000",
                               PYTHONPATH=str(ROOT))
                    r = _run(mode, pdf, pdf.name, env)
                    growth = r["peak_mb"] - r["baseline_mb"]
                    target = 2 * size_mb + 100
                    met = growth + r["child_peak_mb"] <= target
                    print(f"| ×{scale} | {len(copies)} | {size_mb:.2f} | {mode} | {r['invocations']} | {r['chunks']} | "
                          f"{r['seconds']:.2f} | {r['baseline_mb']:.0f} | {r['peak_mb']:.0f} | {growth:.1f} | "
                          f"{r['child_peak_mb']:.0f} | {target:.0f} ({'met' if met else 'MISSED'}) |", flush=True)
                    shutil.rmtree(state, ignore_errors=True)
                pdf.unlink()
        finally:
            proc.terminate()
            proc.wait(timeout=10)


if __name__ == "__main__":
    main()

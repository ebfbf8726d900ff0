"""Fuzz the parsers and splitters with mutated copies of the repository's documents (hypothesis drives the
mutations): every input must end as pages and chunks or as a ``ParseError`` reason, within the limits.

Run by hand from the repository root (hypothesis is in requirements-dev.txt):

    .venv/bin/python benchmarks/fuzz_parsers.py [--examples N] [--timeout-s S] [--seed K]

Each example picks a document (samples/ and tests/data/), applies 1-8 mutations (bit flips, byte runs
overwritten, cuts, a slice duplicated or deleted, bytes inserted, a truncation; for DOCX, one ZIP member's
inflated XML mutated and the package rebuilt), and runs ``parse_document`` and the format's default splitter in a
worker process with a 1 GB address-space cap. Outcomes:

  ok          pages and chunks
  reason      a ParseError reason (the document would be ``failed`` in the ledger with it)
  wrapped     a reason of the form ``could not parse: <library error>`` (explained, but by the library)
  crash       any other exception, or the worker died (a segfault, out of memory)
  hang        no answer within --timeout-s (the worker is killed and restarted)

It prints counts per format and outcome, the slowest examples, the worker's peak RSS, and the first crash or
hang with its seed (``--seed`` replays the run). The target is 0 crashes and 0 hangs.
"""

from __future__ import annotations

import argparse
import collections
import io
import json
import os
import random
import select
import subprocess
import sys
import time
import zipfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from bench_args import at_least  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
_DOCUMENTS = sorted(p for folder in (ROOT / "samples", ROOT / "tests" / "data") for p in folder.iterdir()
                    if p.is_file() and p.name != "SOURCES.md")  # the licence lists are not documents
_ADDRESS_SPACE_BYTES = 1024**3

_WORKER = r"""
import json, resource, sys, time
resource.setrlimit(resource.RLIMIT_AS, (int(sys.argv[1]), int(sys.argv[1])))
from chunking.documents.splitter import splitter_for
from chunking.parsers import ParseError, ReadContext, parse_document
from chunking.settings import Settings
settings = Settings()
print("ready", flush=True)
for line in sys.stdin:
    task = json.loads(line)
    data = bytes.fromhex(task["hex"])
    started = time.perf_counter()
    try:
        pages = parse_document(data, source=task["source"], context=ReadContext())
        chunks = list(splitter_for(task["source"], settings).split(pages))
        outcome, detail = "ok", f"{len(pages)} pages, {len(chunks)} chunks"
    except ParseError as exc:
        outcome = "wrapped" if exc.reason.startswith("could not parse") else "reason"
        detail = exc.reason
    except BaseException as exc:
        outcome, detail = "crash", f"{type(exc).__name__}: {exc}"[:300]
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"outcome": outcome, "detail": detail, "seconds": time.perf_counter() - started,
                      "rss_mb": rss}), flush=True)
"""


class Worker:
    """A parser process fed one input at a time; restarted after a hang or a death."""

    def __init__(self) -> None:
        self.process: subprocess.Popen | None = None
        self.peak_rss_mb = 0.0

    def start(self) -> None:
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        self.process = subprocess.Popen([sys.executable, "-c", _WORKER, str(_ADDRESS_SPACE_BYTES)], cwd=ROOT,
                                        env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, text=True)
        assert self.process.stdout.readline().strip() == "ready"

    def run(self, source: str, data: bytes, timeout_s: float) -> dict:
        if self.process is None or self.process.poll() is not None:
            self.start()
        started = time.perf_counter()
        try:
            self.process.stdin.write(json.dumps({"source": source, "hex": data.hex()}) + "\n")
            self.process.stdin.flush()
        except BrokenPipeError:
            return self._died(started)
        ready, _, _ = select.select([self.process.stdout], [], [], timeout_s)
        if not ready:
            self.stop()
            return {"outcome": "hang", "detail": f"no answer in {timeout_s:g} s", "seconds": timeout_s}
        line = self.process.stdout.readline()
        if not line:
            return self._died(started)
        result = json.loads(line)
        self.peak_rss_mb = max(self.peak_rss_mb, result["rss_mb"])
        return result

    def _died(self, started: float) -> dict:
        code = self.process.wait()
        self.process = None
        return {"outcome": "crash", "detail": f"worker died (exit {code})", "seconds": time.perf_counter() - started}

    def stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None


# --------------------------------------------------------------------------------------------- mutations

_OPS = ("flip", "overwrite", "cut", "duplicate", "delete", "insert", "truncate")


def mutate(data: bytes, plan: list[tuple[str, int, bytes]]) -> bytes:
    """Apply *plan* (operation, a position seed, bytes) to *data*; positions are taken modulo its length."""
    buf = bytearray(data)
    for op, seed, payload in plan:
        rng = random.Random(seed)
        n = len(buf)
        if n == 0:
            break
        at = rng.randrange(n)
        span = rng.randint(1, max(1, min(4096, n - at)))
        if op == "flip":
            buf[at] ^= 1 << rng.randrange(8)
        elif op == "overwrite":
            buf[at : at + len(payload)] = payload
        elif op == "cut":
            del buf[at:]
        elif op == "duplicate":
            buf[at:at] = buf[at : at + span] * rng.randint(2, 64)
        elif op == "delete":
            del buf[at : at + span]
        elif op == "insert":
            buf[at:at] = payload
        elif op == "truncate":
            del buf[max(1, n - span) :]
    return bytes(buf)


def mutate_docx(data: bytes, plan: list[tuple[str, int, bytes]]) -> bytes:
    """Mutate the inflated XML of one member (chosen by the plan's first seed) and rebuild the package, so the
    mutations reach the XML parser instead of only breaking the ZIP's checksums."""
    with zipfile.ZipFile(io.BytesIO(data)) as source:
        infos = source.infolist()
        xml = [i for i in infos if i.filename.endswith((".xml", ".rels"))]
        target = xml[plan[0][1] % len(xml)].filename if xml and plan else None
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as package:
            for info in infos:
                member = source.read(info)
                package.writestr(info.filename, mutate(member, plan) if info.filename == target else member)
    return out.getvalue()


# --------------------------------------------------------------------------------------------------- run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=at_least(1), default=400, help="mutated inputs to run (default 400)")
    parser.add_argument("--timeout-s", type=float, default=30.0, help="a hang after this many seconds (default 30)")
    parser.add_argument("--seed", type=int, default=0, help="hypothesis seed (default 0, reproducible)")
    args = parser.parse_args(argv)

    originals = {p.name: p.read_bytes() for p in _DOCUMENTS}
    worker = Worker()
    results: list[tuple[str, str, dict]] = []
    plans = st.lists(st.tuples(st.sampled_from(_OPS), st.integers(0, 2**31), st.binary(min_size=1, max_size=64)),
                     min_size=1, max_size=8)

    @settings(max_examples=args.examples, database=None, deadline=None, derandomize=False,
              suppress_health_check=list(HealthCheck), phases=["generate"])
    @given(name=st.sampled_from(sorted(originals)), plan=plans, zip_level=st.booleans())
    def one(name: str, plan, zip_level: bool) -> None:
        data = originals[name]
        mutated = mutate_docx(data, plan) if name.endswith(".docx") and zip_level else mutate(data, plan)
        result = worker.run(name, mutated, args.timeout_s)
        results.append((name, Path(name).suffix.lower(), result))
        if len(results) % 50 == 0:
            print(f"  {len(results)} examples…", file=sys.stderr)

    started = time.perf_counter()
    from hypothesis import seed as hypothesis_seed

    hypothesis_seed(args.seed)(one)()
    worker.stop()
    elapsed = time.perf_counter() - started
    _report(results, worker.peak_rss_mb, elapsed)
    bad = [r for r in results if r[2]["outcome"] in ("crash", "hang")]
    return 1 if bad else 0


def _report(results: list[tuple[str, str, dict]], peak_rss_mb: float, elapsed: float) -> None:
    outcomes = ("ok", "reason", "wrapped", "crash", "hang")
    by_format: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for _, ext, result in results:
        by_format[ext][result["outcome"]] += 1
    print(f"{len(results)} mutated inputs in {elapsed:.0f} s; worker peak RSS {peak_rss_mb:.0f} MB\n")
    print(f"{'format':8}" + "".join(f"{o:>9}" for o in outcomes) + f"{'max s':>9}")
    for ext in sorted(by_format):
        slowest = max(r["seconds"] for _, e, r in results if e == ext)
        print(f"{ext:8}" + "".join(f"{by_format[ext][o]:>9}" for o in outcomes) + f"{slowest:>9.2f}")
    total = collections.Counter(r["outcome"] for _, _, r in results)
    print(f"{'all':8}" + "".join(f"{total[o]:>9}" for o in outcomes)
          + f"{max((r['seconds'] for _, _, r in results), default=0):>9.2f}")
    reasons = collections.Counter(r["detail"].split(":")[0] for _, _, r in results if r["outcome"] != "ok")
    print("\nmost common reasons:")
    for reason, count in reasons.most_common(8):
        print(f"  {count:5}  {reason}")
    for name, _, result in results:
        if result["outcome"] in ("crash", "hang", "wrapped"):
            print(f"\nfirst {result['outcome']}: {name}: {result['detail']}")
            break


if __name__ == "__main__":
    raise SystemExit(main())

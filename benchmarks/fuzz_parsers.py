"""Fuzz the parsers and splitters with mutated copies of documents of every supported format family (hypothesis
drives the mutations): every input must end as pages and chunks or as a ``ParseError`` reason, within the limits.

Run by hand from the repository root (hypothesis is in requirements-dev.txt):

    .venv/bin/python benchmarks/fuzz_parsers.py [--examples N] [--timeout-s S] [--seed K] [--formats .odt,.zip]
        [--save FOLDER]

Seeds: the repository's documents (samples/ and tests/data/) and, for each format family they lack, a small valid
document built here (``built_seeds``: OOXML with and without pictures, a PDF with a scanned page, OpenDocument,
EPUB, RTF, XLS, mail, Outlook message, ZIP archive, PNG/JPEG/BMP/TIFF/GIF, TSV, text and program code), so that
every parser of the format table is fuzzed. The examples take the seeds in turn (with --examples N, each seed gets
N / seeds of them), each with one kind of mutation:

  bytes       1-8 byte mutations (bit flips, byte runs overwritten, cuts, a slice duplicated or deleted, bytes
              inserted, a truncation)
  member      for a ZIP package or archive: one member's inflated bytes mutated as above, the package rebuilt with
              valid checksums (the mutations reach the XML or the member's own parser)
  zip         for a ZIP package or archive: 1-8 fields of its structure set to edge values (central directory and
              local header: version needed, flags, compression method, CRC, sizes, name/extra/comment lengths,
              local header offset; the end record's counts, size and offset; a name's bytes made non-UTF-8)

and runs ``parse_document``, the format's default splitter and the declared-title reader in a worker process
with a 1 GB address-space cap; for a container (mail, Outlook message, ZIP archive) also its members as stage 1
hands them out (``iter_members``), each member parsed by its own format's parser. Outcomes (the worst of the
example's steps):

  ok          pages and chunks
  reason      a ParseError reason (the document would be ``failed`` in the ledger with it)
  wrapped     a reason of the form ``could not parse: <library error>`` (explained, but by the library)
  crash       any other exception, or the worker died (a segfault, out of memory)
  hang        no answer within --timeout-s (the worker is killed and restarted)

An input that ran out of memory or killed the worker is run once more in a fresh worker, and that outcome counts:
the long-lived worker's address space grows over thousands of examples, which a stage-1 parse child, forked for
one document, never does.

It prints counts per format and outcome, the most common reasons, the worker's peak RSS, and every distinct
crash, hang and wrapped error with the seed document and mutation kind. ``--seed`` replays the mutations, but the
OOXML seeds built here carry the time they were written, so ``--save`` keeps the inputs that failed (and those that
ran out of memory) to replay them. The target is 0 crashes, 0 hangs and 0 wrapped errors.
"""

from __future__ import annotations

import argparse
import collections
import io
import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from bench_args import at_least  # noqa: E402
from fuzz_mutations import KINDS, OPS, mutate, mutate_member, mutate_zip  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
_DOCUMENTS = sorted(p for folder in (ROOT / "samples", ROOT / "tests" / "data") for p in folder.iterdir()
                    if p.is_file() and p.name != "SOURCES.md")  # the licence lists are not documents
_ADDRESS_SPACE_BYTES = 1024**3
#: Extensions whose files are ZIP packages or archives (the member and zip mutations apply).
_ZIP_EXTENSIONS = (".docx", ".pptx", ".xlsx", ".xlsm", ".epub", ".odt", ".ods", ".odp", ".zip")

_WORKER = r"""
import json, resource, sys, time
resource.setrlimit(resource.RLIMIT_AS, (int(sys.argv[1]), int(sys.argv[1])))
from chunking.documents.splitter import splitter_for
from chunking.formats import format_of
from chunking.parsers import ParseError, ReadContext, parse_document
from chunking.parsers.members import iter_members
from chunking.parsers.titles import property_title
from chunking.settings import Settings
settings = Settings()
RANK = {"ok": 0, "reason": 1, "wrapped": 2, "crash": 3}

def step(action):
    try:
        return "ok", action()
    except ParseError as exc:
        return ("wrapped" if exc.reason.startswith("could not parse") else "reason"), exc.reason
    except BaseException as exc:
        return "crash", f"{type(exc).__name__}: {exc}"[:300]

def document(data, source):
    pages = parse_document(data, source=source, context=ReadContext())
    chunks = list(splitter_for(source, settings).split(pages))
    return f"{len(pages)} pages, {len(chunks)} chunks"

def members(data, source):
    seen = []
    for member in iter_members(data, source=source, context=ReadContext()):
        child = f"{source}/{member.name}"
        if member.reason or format_of(child) is None:
            seen.append(("ok", f"{member.name}: refused"))
        else:
            outcome, detail = step(lambda: document(member.data, child))
            seen.append((outcome, f"member {member.name}: {detail}"))
    return seen

print("ready", flush=True)
for line in sys.stdin:
    task = json.loads(line)
    data, source = bytes.fromhex(task["hex"]), task["source"]
    started = time.perf_counter()
    results = [step(lambda: document(data, source)), step(lambda: property_title(data, source))]
    fmt = format_of(source)
    if fmt is not None and fmt.members:
        outcome, seen = step(lambda: members(data, source))
        results.extend(seen if outcome == "ok" else [(outcome, f"members: {seen}")])
    outcome, detail = max(results, key=lambda r: RANK[r[0]])
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


# ------------------------------------------------------------------------------------------------- seeds


def built_seeds() -> dict[str, bytes]:
    """A small valid document of each format family the repository's documents lack, by file name: the
    parser examples of docs/parsers.md (``tests.parsers.examples``), OpenDocument sheets and slides, a macro-
    enabled workbook, a mail with a ZIP attached, a ZIP archive of several formats (a nested one among them),
    images drawn with Pillow (a two-frame TIFF and GIF), a DOCX and a PPTX with a picture and a PDF with a scanned
    page (their pictures are read by OCR), TSV, plain text and program code."""
    from email.message import EmailMessage

    from tests import pixel_documents
    from tests.parsers import examples, made

    seeds = {example.source: example.build() for example in examples.EXAMPLES if example.layout is None}
    seeds["budget.xlsm"] = seeds["budget.xlsx"]
    seeds["sales.ods"] = made.odf("spreadsheet", '<table:table table:name="Sales"><table:table-row>'
                                  "<table:table-cell><text:p>Region</text:p></table:table-cell>"
                                  '<table:table-cell office:value-type="float" office:value="10"><text:p>10</text:p>'
                                  '</table:table-cell></table:table-row><table:table-row table:number-rows-repeated='
                                  '"2"><table:table-cell table:number-columns-repeated="2"><text:p>x</text:p>'
                                  "</table:table-cell></table:table-row></table:table>", title="Sales")
    seeds["deck.odp"] = made.odf("presentation", '<draw:page draw:name="p1"><draw:frame presentation:class="title">'
                                 "<draw:text-box><text:p>Welcome</text:p></draw:text-box></draw:frame>"
                                 "<presentation:notes><draw:frame><draw:text-box><text:p>Say hello.</text:p>"
                                 "</draw:text-box></draw:frame></presentation:notes></draw:page>", title="Deck")
    seeds.update(_images())
    picture = pixel_documents.paragraph_image(["Depot map", "North gate"], width_px=400)
    seeds["figure.docx"] = pixel_documents.docx_with_picture("Before the map.", picture, "After the map.")
    seeds["figure.pptx"] = pixel_documents.pptx_with_picture("Depot", picture)
    seeds["scanned.pdf"] = pixel_documents.pdf_of(["A page with text.", picture])
    seeds["rows.tsv"] = b"city\tpeople\nOslo\t700000\nBergen\t290000\n"
    seeds["notes.log"] = b"2024-05-03 09:00 depot opened\n2024-05-03 17:00 depot closed\n"
    seeds["tool.py"] = (b'def area(width_m: float, height_m: float) -> float:\n    """Area."""\n'
                        b"    return width_m * height_m\n")
    inner = made.zip_package({"readme.txt": "The inner archive.\n", "data.json": '{"a": [1, 2]}'})
    seeds["bundle.zip"] = made.zip_package({
        "docs/notes.txt": "Depot keys are at the front desk.\n", "docs/leave.docx": seeds["leave.docx"],
        "minutes.odt": seeds["minutes.odt"], "scan.png": seeds["scan.png"], "inner.zip": inner,
        "cities.csv": seeds["cities.csv"], "folder/": b""})
    message = EmailMessage()
    message["Subject"], message["From"], message["To"] = "Reports", "Alex <alex@example.com>", "ops@example.com"
    message.set_content("Two reports attached.\n")
    message.add_attachment(seeds["prices.pdf"], maintype="application", subtype="pdf", filename="prices.pdf")
    message.add_attachment(inner, maintype="application", subtype="zip", filename="inner.zip")
    seeds["reports.eml"] = message.as_bytes()
    return seeds


def _images() -> dict[str, bytes]:
    from PIL import Image, ImageDraw

    def drawn(text: str) -> Image.Image:
        picture = Image.new("RGB", (360, 80), "white")
        ImageDraw.Draw(picture).text((10, 25), text, fill="black", font_size=28)
        return picture

    first, second = drawn("Invoice 42"), drawn("Page two")
    out = {}
    for name, fmt, frames in (("scan.png", "PNG", 1), ("scan.jpg", "JPEG", 1), ("scan.bmp", "BMP", 1),
                              ("scan.tif", "TIFF", 2), ("scan.gif", "GIF", 2)):
        buffer = io.BytesIO()
        if frames > 1:
            first.save(buffer, fmt, save_all=True, append_images=[second])
        else:
            first.save(buffer, fmt)
        out[name] = buffer.getvalue()
    return out


# --------------------------------------------------------------------------------------------- mutations

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=at_least(1), default=400, help="mutated inputs to run (default 400)")
    parser.add_argument("--timeout-s", type=float, default=30.0, help="a hang after this many seconds (default 30)")
    parser.add_argument("--seed", type=int, default=0, help="hypothesis seed (default 0, reproducible)")
    parser.add_argument("--formats", default="", help="only seeds of these extensions (\".odt,.zip\"; default all)")
    parser.add_argument("--save", type=Path,
                        help="a folder to write each input that crashed, hung, was wrapped or ran out of memory to")
    args = parser.parse_args(argv)

    originals = {p.name: p.read_bytes() for p in _DOCUMENTS}
    originals.update(built_seeds())
    if args.formats:
        wanted = {ext.strip().lower() for ext in args.formats.split(",")}
        originals = {name: data for name, data in originals.items() if Path(name).suffix.lower() in wanted}
    worker = Worker()
    results: list[tuple[str, str, dict]] = []
    reruns: list[tuple[str, str]] = []
    plans = st.lists(st.tuples(st.sampled_from(OPS), st.integers(0, 2**31), st.binary(min_size=1, max_size=64)),
                     min_size=1, max_size=8)

    names = sorted(originals)

    @settings(max_examples=args.examples, database=None, deadline=None, derandomize=False,
              suppress_health_check=list(HealthCheck), phases=["generate"])
    @given(plan=plans, kind=st.sampled_from(KINDS))
    def one(plan, kind: str) -> None:
        name = names[len(results) % len(names)]  # the seeds in turn, so every format gets its share
        data = originals[name]
        kind = kind if name.lower().endswith(_ZIP_EXTENSIONS) else "bytes"
        mutated = mutate_member(data, plan) if kind == "member" else mutate_zip(data, plan) if kind == "zip" \
            else mutate(data, plan)
        result = worker.run(name, mutated, args.timeout_s)
        if "out of memory" in result["detail"] or "worker died" in result["detail"]:
            # The worker's address space accumulates over examples (the OCR runtime's arenas and threads), as a
            # stage-1 parse child's never does: such an input is run again in a fresh worker, and that counts.
            worker.stop()
            result = {**worker.run(name, mutated, args.timeout_s), "rerun": True}
            reruns.append((name, result["outcome"]))
        result["kind"] = kind
        results.append((name, Path(name).suffix.lower(), result))
        if args.save and (result["outcome"] in ("crash", "hang", "wrapped") or "out of memory" in result["detail"]):
            args.save.mkdir(parents=True, exist_ok=True)
            (args.save / f"{len(results):05}-{result['outcome']}-{name}").write_bytes(mutated)
        if len(results) % 50 == 0:
            print(f"  {len(results)} examples…", file=sys.stderr, flush=True)

    started = time.perf_counter()
    from hypothesis import seed as hypothesis_seed

    hypothesis_seed(args.seed)(one)()
    worker.stop()
    elapsed = time.perf_counter() - started
    _report(results, worker.peak_rss_mb, elapsed)
    if reruns:
        print(f"\nrun again in a fresh worker after running out of memory or dying: {len(reruns)} ("
              + ", ".join(f"{n} {o}" for o, n in collections.Counter(o for _, o in reruns).items()) + ")")
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
    kinds = collections.Counter((r["kind"], r["outcome"]) for _, _, r in results)
    print("\nby mutation kind: " + "; ".join(f"{k}: " + ", ".join(f"{kinds[k, o]} {o}" for o in outcomes
                                                                 if kinds[k, o]) for k in KINDS))
    reasons = collections.Counter(r["detail"].split(":")[0] for _, _, r in results if r["outcome"] != "ok")
    print("\nmost common reasons:")
    for reason, count in reasons.most_common(10):
        print(f"  {count:5}  {reason}")
    shown: set[str] = set()
    for name, _, result in results:
        key = result["detail"][:80]
        if result["outcome"] in ("crash", "hang", "wrapped") and key not in shown:
            shown.add(key)
            print(f"\n{result['outcome']}: {name} ({result['kind']}): {result['detail']}")


if __name__ == "__main__":
    raise SystemExit(main())

"""Time ``celerylint server`` through a real LSP client over stdio.

    python benchmarks/server.py /path/to/saleor-copy [--file saleor/product/tasks.py] [--changes 30]

Run it with the interpreter celerylint is installed in (with the ``server``
extra).  The checkout is only read; the caches go to temporary directories
(``CELERYLINT_CACHE_DIR``).  When ``--file`` is shorter than 1,000 lines,
a copy of it grown to 1,000 lines with more tasks (``_bench_tasks.py``
beside it) is written into the checkout first: use a copy of the tree.

It prints, as medians over ``--runs`` rounds:

- the cold one-file command line (``celerylint --no-cache FILE``: the run
  reads the whole project for that file, as a run on a file does);
- a cold server (empty cache): from ``didOpen`` to the first diagnostics
  (the buffer by itself, while the project is read), and to the
  diagnostics with the whole project in view;
- a warm server: from each ``didChange`` of the 1,000-line file (one line
  edited, the whole text sent) to the diagnostics of that version, with
  ``debounce`` 0 (the analysis itself) and with the default debounce, and
  the server's CPU time per change (what to trust on a busy machine: the
  wall-clock figures stretch with the load).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "server"))

from lsp_client import Client  # noqa: E402

EXTRA_TASK = '''

@app.task(bind=True)
def refresh_listing_{n}(self, listing_id):
    """Recompute one listing's cached view {n}."""
    key = f"listing:{{listing_id}}:{n}"
    value = compute_listing_{n}(listing_id)
    if value is None:
        raise self.retry(countdown=30)
    return {{"key": key, "value": value}}


def compute_listing_{n}(listing_id):
    total = 0
    for step in range(listing_id % 7):
        total += step * {n}
    return total or None
'''


def grown(path: Path, lines: int = 1000) -> Path:
    """``path``, or a copy of it grown with tasks to ``lines`` lines."""
    text = path.read_text()
    if text.count("\n") >= lines:
        return path
    text += "\nfrom ..celeryconf import app\n"
    n = 0
    while text.count("\n") < lines:
        text += EXTRA_TASK.format(n=n)
        n += 1
    target = path.with_name("_bench_tasks.py")
    target.write_text("\n".join(text.splitlines()[:lines]) + "\n")
    return target


def cli_cold(root: Path, file: Path) -> float:
    with tempfile.TemporaryDirectory() as cache:
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "celerylint", "--no-cache", str(file.relative_to(root))], cwd=root,
                       capture_output=True, env={**os.environ, "CELERYLINT_CACHE_DIR": cache})
        return time.perf_counter() - start


async def server_cold(root: Path, file: Path) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as cache:
        os.environ["CELERYLINT_CACHE_DIR"] = cache
        client = Client()
        await client.start(root)
        seen: list[float] = []
        start = time.perf_counter()
        uri = client.open(file)
        for count in (1, 2):  # the buffer by itself, then with the project read
            await client.diagnostics_for(uri, lambda d: len(client.published_times.get(uri, ())) >= count)
            seen.append(client.published_times[uri][count - 1] - start)
        await client.stop()
        return seen[0], seen[-1]


def cpu_seconds(pid: int) -> float:
    """User and system time of a process so far (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def server_warm(root: Path, file: Path, changes: int, debounce: int | None) -> tuple[list[float], list[float]]:
    client = Client()
    await client.start(root, {} if debounce is None else {"debounce": debounce})
    uri = client.open(file)
    await client.diagnostics_for(uri, lambda d: any("read " in m for m in client.logs))
    text = file.read_text()
    lines = text.splitlines(keepends=True)
    times, cpu = [], []
    for i in range(changes):
        edited = list(lines)
        middle = len(lines) // 2
        edited[middle] = edited[middle].rstrip("\n") + f"  # edit {i}\n" if edited[middle].strip() else f"# edit {i}\n"
        start, used = time.perf_counter(), cpu_seconds(client.process.pid)
        client.replace(uri, "".join(edited))
        await client.diagnostics_for(uri)
        times.append(time.perf_counter() - start)
        cpu.append(cpu_seconds(client.process.pid) - used)
    await client.stop()
    return times, cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("root", type=Path)
    parser.add_argument("--file", default="saleor/product/tasks.py")
    parser.add_argument("--changes", type=int, default=30)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    root = args.root.resolve()
    file = grown(root / args.file)
    print(f"file: {file.relative_to(root)} ({file.read_text().count(chr(10))} lines)")
    cli, first, full = [], [], []
    for _ in range(args.runs):  # interleaved: a busy machine slows both alike
        cli.append(cli_cold(root, file))
        a, b = asyncio.run(server_cold(root, file))
        first.append(a)
        full.append(b)
    print(f"cold one-file CLI (--no-cache)            median {statistics.median(cli) * 1000:8.0f} ms")
    print(f"cold server, first diagnostics (buffer)   median {statistics.median(first) * 1000:8.0f} ms")
    print(f"cold server, diagnostics with the project median {statistics.median(full) * 1000:8.0f} ms")
    for debounce in (0, None):
        times, cpu = asyncio.run(server_warm(root, file, args.changes, debounce))
        label = "debounce 0" if debounce == 0 else "default debounce"
        print(f"change -> diagnostics ({label:16}) median {statistics.median(times) * 1000:8.0f} ms, "
              f"p90 {sorted(times)[int(len(times) * 0.9)] * 1000:.0f} ms over {len(times)} changes; "
              f"server CPU per change median {statistics.median(cpu) * 1000:.0f} ms")


if __name__ == "__main__":
    main()

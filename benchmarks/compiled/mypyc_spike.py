"""How much faster the Virtual SAN bench scenario runs with its per-IO path compiled by mypyc: a spike, not
part of the workbench (issue 36, items 4 and 5). Nothing here is installed or imported by storagelab.

It takes ``lib/storagelab`` at the commit the patches were made against (``BASE``) three times: as it is
(``plain``), and twice with the 14 modules an IO crosses in that scenario (``MODULES``) compiled by mypyc
after a patch:

- ``mypyc-simpy-events.patch`` (``simpy-events``): what mypyc needed to compile them and run the scenario,
  nothing more. A ``# type: ignore`` on each line mypy rejects, ``@mypyc_attr(allow_interpreted_subclasses=
  True)`` on every class (the components not compiled subclass them), a station's ``submit`` that
  dispatches instead of being reassigned per instance, a delay's constant as a callable object instead of
  a lambda, the IO request without ``slots=True`` and its ``tag`` typed ``Any``, four annotations, and
  ``Any`` for a tiering cache's per-class ranges and its groups' arrays (typed ``int`` and ``float``, they
  hold floats and numpy arrays: compiled, the annotation is checked and notebook 19 failed on it). The
  per-IO events are still SimPy's ``Event``.
- ``mypyc-signal.patch`` (``signal``): the same, and the per-IO events of those modules are a compiled
  class of their own (``Signal``: SimPy's attributes, ``succeed``, ``triggered``), annotated ``Any`` where
  they were ``Event``; a path's IO (``_PathIO``) subclasses it. SimPy's processes still wait on them.
  ``Signal`` has a ``__call__`` that raises: without one, the event loop segfaulted when it called a
  ``_PathIO`` (a compiled subclass adding ``__call__`` to a compiled base without one).

Then it runs the scenario (1 simulated second, 0.2 of warm-up, seed 1) in a fresh process for each, in
turn, ``--rounds`` times, and prints each run, each compiled variant's ratio to ``plain`` per round and
their medians, and whether every run gave the same IOs and mean response (they must).

    .venv/bin/python benchmarks/compiled/mypyc_spike.py --rounds 6
    .venv/bin/python benchmarks/compiled/mypyc_spike.py --rounds 2 --notebook

With ``--notebook`` each round runs notebook 19 at its default parameters instead (``storagelab run
19-compare-architectures`` in a checkout of ``BASE``, the compiled modules first on ``PYTHONPATH``; the
kernel and the Dask workers inherit it), and checks that every run's outputs (every cell, every mimetype)
are the plain run's.

Needs git, patch, a C compiler, and mypy from the package index (installed into a scratch folder, not the
venv). Compiling takes about four minutes per variant on a 2-core machine.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BASE = "2561442"
MYPY = "mypy==2.4.1"
VARIANTS = {"simpy-events": "mypyc-simpy-events.patch", "signal": "mypyc-signal.patch"}
MODULES = [
    *(f"storagelab/kernel/{m}.py" for m in
      ("event_loop", "composition", "station", "stages", "component", "io", "sources", "metrics")),
    *(f"storagelab/components/{m}.py" for m in
      ("cluster", "raid_set", "write_log", "cache", "tiering", "extent")),
]  # fmt: skip
RUN = """
import sys, time
sys.path.insert(0, sys.argv[1])
import storagelab.kernel.station as st
from storagelab.verify.benchmark import vsan_scenario_run
run = vsan_scenario_run()
t = time.perf_counter()
res, n = run(1.0, 0.2, 1)
print(n, time.perf_counter() - t, repr(res.summary()["mean_ms"][0]), st.__file__.endswith(".so"))
"""


def _checkout(repo: Path, into: Path, whole: bool = False) -> Path:
    """``lib/storagelab`` at ``BASE`` under ``into`` (``whole``: the whole checkout); returns ``into / "lib"``."""
    paths = [] if whole else ["lib/storagelab"]
    archive = subprocess.run(["git", "-C", str(repo), "archive", BASE, *paths], check=True,
                             capture_output=True).stdout  # fmt: skip
    into.mkdir()
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into / "lib"


def _outputs(notebook: Path) -> list[str]:
    """Every output of every code cell of an executed notebook, as JSON (its counts and metadata left out)."""
    cells = json.loads(notebook.read_text())["cells"]
    return [json.dumps({k: v for k, v in o.items() if k not in ("execution_count", "metadata")}, sort_keys=True)
            for c in cells if c["cell_type"] == "code" for o in c.get("outputs", [])]  # fmt: skip


def _notebook_run(lib: Path) -> tuple[float, list[str]]:
    """Notebook 19 at its defaults in the checkout around ``lib``: the wall time (s) and its outputs."""
    t = time.perf_counter()
    subprocess.run([str(Path(sys.executable).parent / "storagelab"), "run", "19-compare-architectures"],
                   cwd=lib.parent, env={**os.environ, "PYTHONPATH": str(lib)}, check=True, capture_output=True)  # fmt: skip
    return time.perf_counter() - t, _outputs(lib.parent / "results" / "19-compare-architectures.ipynb")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=6, help="runs of each, in turn (default 6)")
    ap.add_argument(
        "--notebook", action="store_true", help="run notebook 19 (defaults), not the bench scenario"
    )
    args = ap.parse_args()
    here = Path(__file__).resolve().parent
    repo = here.parent.parent
    scratch = Path(tempfile.mkdtemp(prefix="mypyc-spike-"))
    try:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--target", str(scratch / "mypy"), MYPY],
                       check=True)  # fmt: skip
        libs = {"plain": _checkout(repo, scratch / "plain", args.notebook)}
        for name, patch in VARIANTS.items():
            lib = libs[name] = _checkout(repo, scratch / name, args.notebook)
            subprocess.run(["patch", "-s", "-p1", "-d", str(lib.parent), "-i", str(here / patch)], check=True)
            env = {"PYTHONPATH": f"{scratch / 'mypy'}:{lib}", "PATH": "/usr/bin:/bin"}
            print(f"compiling {len(MODULES)} modules ({name}) with {MYPY} ...", flush=True)
            subprocess.run([sys.executable, "-m", "mypyc", "--ignore-missing-imports", "--follow-imports=silent",
                            *MODULES], cwd=lib, env=env, check=True, capture_output=True)  # fmt: skip
            shutil.rmtree(lib / "build")
        ratios: dict[str, list[float]] = {name: [] for name in VARIANTS}
        outcomes = set()
        for k in range(args.rounds):
            walls = {}
            for name, lib in libs.items():
                if args.notebook:
                    walls[name], outputs = _notebook_run(lib)
                    outcomes.add(tuple(outputs))
                    print(f"round {k + 1} {name:12s} notebook 19 in {walls[name]:.1f} s", flush=True)
                    continue
                out = subprocess.run([sys.executable, "-c", RUN, str(lib)], check=True, capture_output=True,
                                     text=True).stdout.split()  # fmt: skip
                ios, wall, mean, compiled = int(out[0]), float(out[1]), out[2], out[3] == "True"
                if compiled != (name != "plain"):
                    raise SystemExit(f"the {name} run imported the wrong station module")
                walls[name] = wall
                outcomes.add((ios, mean))
                print(f"round {k + 1} {name:12s} {ios} IOs in {wall:.3f} s = {1e6 * wall / ios:.1f} us/IO, "
                      f"mean {float(mean):.6f} ms", flush=True)  # fmt: skip
            for name in VARIANTS:
                ratios[name].append(walls["plain"] / walls[name])
        for name, r in ratios.items():
            print(f"plain / {name}: " + " ".join(f"{x:.2f}" for x in r)
                  + f"; median {statistics.median(r):.2f}")  # fmt: skip
        what = "outputs" if args.notebook else "IOs and mean response"
        print(f"same {what} in every run: {len(outcomes) == 1}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()

"""How much faster the Virtual SAN bench scenario runs with its per-IO path compiled by mypyc: a spike, not
part of the workbench (issue 36, items 4 and 5). Nothing here is installed or imported by storagelab.

It takes ``lib/storagelab`` at the commit the patches were made against (``BASE``) three times: as it is
(``plain``), and twice with the 14 modules an IO crosses in that scenario (``MODULES``) compiled by mypyc
after a patch:

- ``mypyc-simpy-events.patch`` (``simpy-events``): what mypyc needed to compile them and run the scenario,
  nothing more. A ``# type: ignore`` on each line mypy rejects, ``@mypyc_attr(allow_interpreted_subclasses=
  True)`` on every class (the components not compiled subclass them), a station's ``submit`` that
  dispatches instead of being reassigned per instance, a delay's constant as a callable object instead of
  a lambda, the IO request without ``slots=True`` and its ``tag`` typed ``Any``, four annotations. The
  per-IO events are still SimPy's ``Event``.
- ``mypyc-signal.patch`` (``signal``): the same, and the per-IO events of those modules are a compiled
  class of their own (``Signal``: SimPy's attributes, ``succeed``, ``triggered``), annotated ``Any`` where
  they were ``Event``; a path's IO (``_PathIO``) subclasses it. SimPy's processes still wait on them.

Then it runs the scenario (1 simulated second, 0.2 of warm-up, seed 1) in a fresh process for each, in
turn, ``--rounds`` times, and prints each run, each compiled variant's ratio to ``plain`` per round and
their medians, and whether every run gave the same IOs and mean response (they must).

    .venv/bin/python benchmarks/compiled/mypyc_spike.py --rounds 6

Needs git, patch, a C compiler, and mypy from the package index (installed into a scratch folder, not the
venv). Compiling takes about four minutes per variant on a 2-core machine.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
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


def _checkout(repo: Path, into: Path) -> Path:
    """``lib/storagelab`` at ``BASE`` under ``into``; returns ``into / "lib"``."""
    archive = subprocess.run(["git", "-C", str(repo), "archive", BASE, "lib/storagelab"], check=True,
                             capture_output=True).stdout  # fmt: skip
    into.mkdir()
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into / "lib"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=6, help="runs of each, in turn (default 6)")
    args = ap.parse_args()
    here = Path(__file__).resolve().parent
    repo = here.parent.parent
    scratch = Path(tempfile.mkdtemp(prefix="mypyc-spike-"))
    try:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--target", str(scratch / "mypy"), MYPY],
                       check=True)  # fmt: skip
        libs = {"plain": _checkout(repo, scratch / "plain")}
        for name, patch in VARIANTS.items():
            lib = libs[name] = _checkout(repo, scratch / name)
            subprocess.run(["patch", "-s", "-p1", "-d", str(lib.parent), "-i", str(here / patch)], check=True)
            env = {"PYTHONPATH": f"{scratch / 'mypy'}:{lib}", "PATH": "/usr/bin:/bin"}
            print(f"compiling {len(MODULES)} modules ({name}) with {MYPY} ...", flush=True)
            subprocess.run([sys.executable, "-m", "mypyc", "--ignore-missing-imports", "--follow-imports=silent",
                            *MODULES], cwd=lib, env=env, check=True, capture_output=True)  # fmt: skip
        ratios: dict[str, list[float]] = {name: [] for name in VARIANTS}
        outcomes = set()
        for k in range(args.rounds):
            walls = {}
            for name, lib in libs.items():
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
        print(f"same IOs and mean response in every run: {len(outcomes) == 1}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()

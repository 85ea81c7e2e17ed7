"""The ``storagelab`` command: the report, single notebook runs, refreshing committed outputs."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from papermill.exceptions import PapermillExecutionError

from storagelab.input_files import InputFileError
from storagelab.pipeline.layout import ProjectLayout
from storagelab.pipeline.params import load_params

if TYPE_CHECKING:
    import polars as pl

app = typer.Typer(
    help="storagelab: storage architectures under virtualized mixed workloads, simulated and checked "
    "against published results.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

#: A file the user gave that cannot be used (every loader's error is an :class:`InputFileError`, whose
#: message names the file, the key and what is allowed), or one that is not there: printed, no traceback.
_USER_ERRORS = (InputFileError, FileNotFoundError)


def _fail(err: Exception) -> None:
    typer.secho(f"error: {err}", fg=typer.colors.RED, err=True)
    raise typer.Exit(code=2)


def _notebook(layout: ProjectLayout, name: str) -> Path:
    path = Path(name)
    for candidate in (path, layout.notebooks / path, layout.notebooks / f"{path.stem}.ipynb"):
        if candidate.is_file() and candidate.suffix == ".ipynb":
            return candidate
    known = ", ".join(p.stem for p in layout.notebook_paths())
    raise FileNotFoundError(f"notebook {name!r} not found; notebooks: {known}")


@app.command()
def report(
    out: Annotated[Path | None, typer.Option("--out", "-o", help="report folder (default: reports/)")] = None,
    jobs: Annotated[int | None, typer.Option(help="notebooks executed at once (default: the cores)")] = None,
    rerun: Annotated[
        bool, typer.Option("--rerun", help="execute every notebook, even those whose inputs are unchanged")
    ] = False,
) -> None:
    """Execute every notebook with its params/ defaults, several at once, and write an HTML report
    (index.html); notebooks whose inputs are unchanged since the last report are not executed again."""
    from storagelab.pipeline.report import NotebookFailed, build_report

    if jobs is not None and jobs < 1:
        _fail(ValueError(f"--jobs must be >= 1, got {jobs}"))
    try:
        index = build_report(ProjectLayout.discover(), out, jobs=jobs, reuse=not rerun)
    except (*_USER_ERRORS, NotebookFailed) as err:
        _fail(err)
    typer.echo(f"report written: {index}")


@app.command()
def run(
    notebook: Annotated[str, typer.Argument(help="notebook path or name, e.g. 00-published-results")],
    params: Annotated[Path | None, typer.Option("--params", "-p", help="YAML params file")] = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="executed notebook (.ipynb)")] = None,
    html: Annotated[bool, typer.Option(help="also write an HTML page beside the output")] = True,
) -> None:
    """Execute one notebook with validated parameters (default: params/<notebook>.yaml)."""
    from storagelab.pipeline.notebooks import execute
    from storagelab.pipeline.report import render_html

    try:
        layout = ProjectLayout.discover()
        nb_path = _notebook(layout, notebook)
        values = load_params(nb_path, params or layout.default_params(nb_path))
    except _USER_ERRORS as err:
        _fail(err)
    out = out or layout.root / "results" / f"{nb_path.stem}.ipynb"
    try:
        nb = execute(nb_path, out, values)
    except PapermillExecutionError as err:
        _fail(RuntimeError(f"{nb_path.name} failed; executed copy with the error: {out}\n{err}"))
    typer.echo(f"executed notebook: {out}")
    if html:
        render_html(nb, out.with_suffix(".html"))
        typer.echo(f"html: {out.with_suffix('.html')}")


@app.command()
def refresh(
    notebooks: Annotated[list[str] | None, typer.Argument(help="notebooks to refresh (default: all)")] = None,
) -> None:
    """Re-execute notebooks in place and strip volatile metadata, so nbval compares current outputs."""
    from storagelab.pipeline.notebooks import refresh as refresh_notebook

    try:
        layout = ProjectLayout.discover()
        paths = [_notebook(layout, n) for n in notebooks] if notebooks else layout.notebook_paths()
        for p in paths:  # the defaults files must still be valid, or the committed outputs mean nothing
            load_params(p, layout.default_params(p))
    except _USER_ERRORS as err:
        _fail(err)
    for p in paths:
        typer.echo(f"refreshing {p}")
        refresh_notebook(p)


@app.command()
def sweep(
    spec: Annotated[
        Path, typer.Argument(help="sweep spec (YAML): name, scenario or notebook, grid or points, seeds")
    ],
    scheduler: Annotated[
        str | None,
        typer.Option(help="address of an existing Dask scheduler (default: an embedded LocalCluster)"),
    ] = None,
    workers: Annotated[
        int | None, typer.Option(help="LocalCluster worker processes (default: the cores)")
    ] = None,
    results: Annotated[
        Path, typer.Option(help="results folder; the sweep's runs go to RESULTS/<name>/")
    ] = Path("results"),
) -> None:
    """Run a sweep on Dask into a resumable Parquet store: runs already stored are skipped."""
    from storagelab.pipeline.sweeps import SweepError, load_spec, plan
    from storagelab.pipeline.sweeps import sweep as run_sweep

    try:  # every point is validated before a cluster starts
        spec_, source = load_spec(spec)
        plan(spec_, source)
        if workers is not None and workers < 1:
            raise SweepError(f"--workers must be >= 1, got {workers}")
    except InputFileError as err:
        _fail(err)
    done = run_sweep(spec, results=results, scheduler=scheduler, workers=workers)
    typer.echo(
        f"sweep {spec_.name}: {done.planned} runs, {done.skipped} already stored, {done.computed} computed, "
        f"{len(done.failed)} failed, in {done.wall_s:.1f} s; results: {done.store.folder}"
    )
    for line in done.failed:
        typer.echo(f"  failed: {line}", err=True)
    if done.failed:
        raise typer.Exit(1)


@app.command("check-params")
def check_params(
    files: Annotated[
        list[Path],
        typer.Argument(help="params files; the notebook is the file's stem unless --notebook is given"),
    ],
    notebook: Annotated[str | None, typer.Option(help="notebook whose schema to check against")] = None,
) -> None:
    """Validate params files without running anything."""
    try:
        for f in files:
            values = load_params(notebook or f.stem, f)
            typer.echo(f"{f}: ok {values}")
    except _USER_ERRORS as err:
        _fail(err)


def _echo_tables(*tables: object, str_lengths: int) -> None:
    """Print Polars frames whole, without shapes or dtypes, floats to 3 decimals."""
    import polars as pl

    with pl.Config(
        tbl_rows=-1,
        tbl_cols=-1,
        tbl_width_chars=250,
        tbl_hide_dataframe_shape=True,
        float_precision=3,
        tbl_hide_column_data_types=True,
        fmt_str_lengths=str_lengths,
    ):
        for t in tables:
            typer.echo(t)


@app.command()
def bench(
    quick: Annotated[bool, typer.Option("--quick", help="shorter runs, one repeat (under a minute)")] = False,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="also write the rows as CSV")] = None,
    repeats: Annotated[int | None, typer.Option(help="runs per model (default 3, or 1 with --quick)")] = None,
    seed: Annotated[int, typer.Option(help="first seed")] = 1,
    sweep: Annotated[
        bool, typer.Option("--sweep", help="instead: a 16-run sweep on 1 and on 2 Dask workers (speed-up)")
    ] = False,
    against: Annotated[
        str | None,
        typer.Option(help="instead: the storagelab rows here and at git revision AGAINST, alternately"),
    ] = None,
    rounds: Annotated[int, typer.Option(help="with --against: runs of each checkout")] = 5,
    per_io: Annotated[
        bool,
        typer.Option("--per-io", help="instead: the Virtual SAN row's events, Python calls and time per IO"),
    ] = False,
    limits: Annotated[
        bool,
        typer.Option(
            "--limits", help="instead: runs with and without run limits, alternately (the guard's cost)"
        ),
    ] = False,
) -> None:
    """Simulated IOs per wall-second: storagelab beside Ciw and textbook SimPy models, on an M/M/4 queue
    and on a Virtual SAN calibration scenario; with --sweep, the speed-up of a sweep on two workers
    over one; with --against REV, this checkout's storagelab rows beside the same rows at REV; with
    --per-io, where the Virtual SAN scenario spends its time per IO, by source file; with --limits, what
    the runaway guard costs (runs with limits that never bind beside runs without, ``rounds`` each)."""

    from storagelab.kernel import native
    from storagelab.verify.benchmark import against_revision, sweep_efficiency
    from storagelab.verify.benchmark import bench as run_bench

    typer.echo(f"per-IO modules: {native.status()}")
    if per_io:
        from storagelab.verify.per_io import per_io_costs

        if native.status().startswith("compiled"):
            typer.echo(
                "(measured with the per-IO modules as pure Python: cProfile does not see compiled code)"
            )

        cost = per_io_costs(horizon=0.5 if quick else 1.0, warmup=0.1 if quick else 0.2, seed=seed)
        typer.echo(cost.summary())
        table = cost.by_file
    elif limits:
        from storagelab.verify.benchmark import run_limit_cost

        table = run_limit_cost(rounds=rounds, seed=seed, horizon=1.0 if quick else 2.0)
    elif against is not None:
        try:
            table = against_revision(against, rounds=rounds, seed=seed)
        except ValueError as e:
            raise typer.BadParameter(str(e), param_hint="--against") from None
    elif sweep:
        table = sweep_efficiency(
            repeats=repeats or (1 if quick else 2), duration_s=25.0 if quick else 100.0, seed=seed
        )
    else:
        table = run_bench(quick=quick, seed=seed, repeats=repeats)
    _echo_tables(table, str_lengths=70)
    if out is not None:
        table.write_csv(out)
        typer.echo(f"rows written: {out}")


@app.command("compile")
def compile_kernel(
    status: Annotated[
        bool,
        typer.Option("--status", help="only say which per-IO modules run here (compiled or pure Python)"),
    ] = False,
    if_stale: Annotated[
        bool,
        typer.Option(
            "--if-stale",
            help="compile only if the build is missing or out of date, and skip with a message (not an error) "
            "on a machine without a C compiler",
        ),
    ] = False,
) -> None:
    """Compile the modules every simulated IO crosses to C extensions with mypyc (a few minutes; the same
    results, faster), into this environment (never the source tree). They are used only while they match
    their sources: after an edit every module runs as pure Python, with a warning, until the next compile.
    STORAGELAB_PURE_PYTHON=1 runs pure Python whatever is built. make runs `compile --if-stale`."""
    from storagelab.kernel import native

    folder = native.build_dir()
    why = native.check(folder)
    if status:
        typer.echo(f"per-IO modules: {native.status()}")
        return
    if if_stale and why is None:
        typer.echo(f"per-IO modules: compiled, up to date ({folder})")
        return
    if if_stale and native.toolchain() is not None:
        typer.echo(f"per-IO modules: not compiled ({native.toolchain()}); running them as pure Python")
        return
    typer.echo(f"compiling {len(native.MODULES)} per-IO modules with mypyc into {folder} (a few minutes) ...")
    try:
        native.build(folder)
    except RuntimeError as err:
        _fail(err)
    typer.echo(f"per-IO modules: compiled ({folder}); new processes use them")


#: The columns ``calibrate`` prints (the CSV keeps all of :data:`storagelab.calibration.COLUMNS`).
_CALIBRATION_SHOWN = (
    "study", "claim", "point", "role", "sensitive", "pass", "unit", "published", "simulated", "ci_low",
    "ci_high", "simulated_half", "simulated_double",
)  # fmt: skip


@app.command()
def calibrate(
    study: Annotated[str | None, typer.Option(help="study to calibrate (default: all)")] = None,
    quick: Annotated[
        bool, typer.Option("--quick", help="short runs (seconds of simulated time each)")
    ] = False,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="also write the full table as CSV")] = None,
    replications: Annotated[
        int | None, typer.Option(help="independent runs per scenario, >= 2 (default 5, or 3 with --quick)")
    ] = None,
    perturbed_replications: Annotated[
        int | None,
        typer.Option(
            help="runs per scenario with capacity x0.5 and x2, the sensitivity check (default 2, "
            "or 1 with --quick)"
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="first seed")] = 1,
    workers: Annotated[
        int | None,
        typer.Option(
            help="processes running replications in parallel (default: one per core; 1: in this process)"
        ),
    ] = None,
    uncertainty: Annotated[
        int,
        typer.Option(
            help="draws of the uncertain parameters per scenario (a power of two, e.g. 16): each point gets "
            "its predictive median, 80 % and 95 % intervals and the parameters that decide it; 0: off"
        ),
    ] = 0,
) -> None:
    """Run the calibration scenarios and compare with the published claims: informative predicted
    claims within tolerance per study, with fitted, insensitive and derived claims set apart; with
    --uncertainty, each point's predictive interval over the parameters' stated ranges."""

    from storagelab import studies

    # every check on the input before the first simulation: a long run must not fail at the end
    if study is not None and study not in studies.study_ids():
        _fail(ValueError(f"unknown study {study!r}; calibrated studies: {', '.join(studies.study_ids())}"))
    if replications is not None and replications < 2:
        _fail(ValueError(f"--replications must be >= 2 (for a confidence interval), got {replications}"))
    most = replications or (3 if quick else 5)
    if perturbed_replications is not None and not 1 <= perturbed_replications <= most:
        _fail(
            ValueError(
                f"--perturbed-replications must be from 1 to --replications, got {perturbed_replications}"
            )
        )
    if workers is not None and workers < 1:
        _fail(ValueError(f"--workers must be >= 1, got {workers}"))
    if uncertainty < 0:
        _fail(ValueError(f"--uncertainty must be a number of draws >= 0, got {uncertainty}"))
    if out is not None and not out.parent.is_dir():
        _fail(FileNotFoundError(f"cannot write {out}: folder {out.parent} does not exist"))
    if out is not None and out.is_dir():
        _fail(
            IsADirectoryError(
                f"cannot write {out}: it is a folder; give a file name, e.g. {out / 'calibration.csv'}"
            )
        )

    # not wrapped in ``except ValueError``: the arguments are checked above, so a ValueError from here on
    # is a fault in a model and keeps its traceback
    result = studies.calibrate(
        study,
        quick=quick,
        replications=replications,
        perturbed_replications=perturbed_replications,
        seed=seed,
        progress=lambda line: typer.echo(line, err=True),
        workers=workers,
        uncertainty=uncertainty,
    )
    shown = _CALIBRATION_SHOWN + (("low80", "high80") if uncertainty else ())
    _echo_tables(result.to_frame().select(shown), str_lengths=40)
    typer.echo(result.summary())
    if out is not None:
        result.to_csv(out)
        typer.echo(f"rows written: {out}")


@app.command()
def measure(
    target: Annotated[Path, typer.Argument(help="the file to measure (created by the command by default)")],
    plan: Annotated[
        Path | None, typer.Option("--plan", help="plan YAML (default: the built-in plan, or --quick's)")
    ] = None,
    out: Annotated[
        Path, typer.Option("--out", "-o", help="dataset folder (a stopped plan resumes in it)")
    ] = Path("measurement"),
    quick: Annotated[bool, typer.Option("--quick", help="the tiny built-in plan (seconds of fio)")] = False,
    keep_file: Annotated[
        bool, typer.Option("--keep-file", help="keep the test file the command created")
    ] = False,
    allow_block_device: Annotated[
        bool, typer.Option("--allow-block-device", help="accept destroying the data on a block device")
    ] = False,
    allow_mounted_device: Annotated[
        bool, typer.Option("--allow-mounted-device", help="accept corrupting a mounted (or held) device")
    ] = False,
    allow_existing_file: Annotated[
        bool,
        typer.Option("--allow-existing-file", help="accept overwriting a file the command did not create"),
    ] = False,
    allow_filling_disk: Annotated[
        bool, typer.Option("--allow-filling-disk", help="accept a test file that fills the file system")
    ] = False,
) -> None:
    """Run a plan of fio jobs against TARGET: fio's JSON per job, one tidy dataset (measurements.csv) and
    its provenance (provenance.json). Safe by default: only a file the command creates."""
    from storagelab.measured.plan import PlanError, plan_named
    from storagelab.measured.run import FioNotFound
    from storagelab.measured.run import measure as run_measure
    from storagelab.measured.target import Allow, UnsafeTarget

    try:
        plan_ = plan_named(plan, quick=quick)
        allow = Allow(allow_block_device, allow_mounted_device, allow_existing_file, allow_filling_disk)
        done = run_measure(target, plan_, out, allow=allow, keep_file=keep_file)
    except (PlanError, UnsafeTarget, FioNotFound, FileNotFoundError) as err:
        _fail(err)
    typer.echo(
        f"plan {plan_.name}: {done.run} jobs run, {done.skipped} already complete; "
        f"{done.rows.height} rows: {done.folder / 'measurements.csv'}"
    )
    unsteady = unsteady_note(done.rows, done.folder)
    if unsteady:
        typer.echo(unsteady)


def unsteady_note(rows: pl.DataFrame, folder: Path) -> str | None:
    """The note ``measure`` and ``fit`` print on the jobs one of whose passes lies farther from the kept
    median than the check's tolerance (:func:`storagelab.measured.check.unsteady_rows`), worst first; None
    when there is none."""
    from storagelab.measured.check import unsteady_rows

    unsteady = unsteady_rows(rows, folder)
    if unsteady.is_empty():
        return None
    jobs = unsteady["job"].unique(maintain_order=True)
    worst = ", ".join(
        f"{j} ({unsteady.filter(job=j)['worst'].max():.1f}x the tolerance)" for j in jobs.head(8)
    )
    return (
        f"note: {jobs.len()} of {rows['job'].n_unique()} jobs had a pass farther from the kept median than the "
        "check's tolerance (one run of them alone could miss an exact model; measure them again to tell the "
        f"device from the run): {worst}" + (", ..." if jobs.len() > 8 else "")
    )


@app.command()
def lab(
    target: Annotated[Path, typer.Argument(help="the test file (created and removed by the command)")],
    plan: Annotated[Path | None, typer.Option("--plan", help="lab plan YAML (default: --quick's)")] = None,
    out: Annotated[Path, typer.Option("--out", "-o", help="dataset folder")] = Path("lab"),
    quick: Annotated[bool, typer.Option("--quick", help="the CI's plan (under a minute of fio)")] = False,
    keep_file: Annotated[
        bool, typer.Option("--keep-file", help="keep the test file the command created")
    ] = False,
) -> None:
    """Run a lab plan: the page cache held to a size by a memory cgroup, and the kernel's block throttle,
    measured with fio in control groups the command creates (and removes, also when interrupted); the
    misses from each group's device counters; cache.csv, throttle.csv, throttle_series.csv and
    provenance.json. Needs root and cgroups (v1 memory and blkio, or v2 memory and io); only a file the
    command creates is measured."""
    from storagelab.lab.cgroup import CgroupUnavailable
    from storagelab.lab.plan import QUICK_PLAN, LabPlanError, load_lab_plan
    from storagelab.lab.run import run_lab
    from storagelab.measured.run import FioNotFound
    from storagelab.measured.target import UnsafeTarget

    if plan is None and not quick:
        _fail(ValueError("give --plan PLAN.yaml, or --quick for the CI's small plan"))
    try:
        plan_ = QUICK_PLAN if plan is None else load_lab_plan(plan)
        tables = run_lab(plan_, target, out, progress=typer.echo, keep_file=keep_file)
    except (LabPlanError, UnsafeTarget, FioNotFound, CgroupUnavailable, FileNotFoundError) as err:
        _fail(err)
    typer.echo(f"plan {plan_.name}: " + ", ".join(f"{out / k} ({v.height} rows)" for k, v in tables.items()))


@app.command("lab-predict")
def lab_predict(
    folder: Annotated[Path, typer.Argument(help="a lab folder written by storagelab lab")],
    device: Annotated[
        Path, typer.Option("--device", help="a storagelab measure folder of the same disk (its fitted model)")
    ] = Path("measurements/vda-ext4"),
    seed: Annotated[int, typer.Option("--seed", help="seed of the predicted draws and simulations")] = 1,
) -> None:
    """Predict every point of a lab run blind (storagelab.lab.predict) and write predicted_cache.csv,
    predicted_throttle.csv, predicted_series.csv and shares.csv into FOLDER; print the shares within
    tolerance per mechanism."""
    from storagelab.lab.report import LabReport

    try:
        lab_ = LabReport.predict(folder, device, seed=seed)
    except FileNotFoundError as err:
        _fail(err)
    for name, table in (("predicted_cache.csv", lab_.cache), ("predicted_throttle.csv", lab_.throttle),
                        ("predicted_series.csv", lab_.series), ("shares.csv", lab_.shares)):  # fmt: skip
        if table is not None:
            table.write_csv(folder / name)
    for r in lab_.shares.iter_rows(named=True):
        typer.echo(f"{r['mechanism']}, {r['metric']}: {r['within']} of {r['points']} within tolerance")


import_app = typer.Typer(help="Read results measured elsewhere.", no_args_is_help=True)
app.add_typer(import_app, name="import")


@import_app.command("fio")
def import_fio(
    results: Annotated[list[Path], typer.Argument(help="fio JSON results (fio 3.x, --output-format=json)")],
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="also write them as a dataset folder")
    ] = None,
) -> None:
    """Read fio 3.x JSON results into the tidy dataset; a malformed or unsupported file is refused,
    named, with what is wrong."""
    from storagelab.measured.results import FioResultError
    from storagelab.measured.run import import_results

    try:
        rows = import_results(list(results), out)
    except FioResultError as err:
        _fail(err)
    _echo_tables(rows.filter(metric="iops").select("job", "direction", "outstanding", "block_size", "value"),
                 str_lengths=40)  # fmt: skip
    typer.echo(
        f"{rows.height} rows from {len(results)} file(s)" + (f": {out / 'measurements.csv'}" if out else "")
    )


@app.command("fit")
def fit_measured(
    folder: Annotated[Path, typer.Argument(help="a dataset folder written by measure or import fio")],
    write: Annotated[bool, typer.Option(help="write fit.csv and check.csv into the folder")] = True,
    check_on: Annotated[
        Path | None,
        typer.Option(
            "--check-on",
            help="also predict every point of another dataset folder of the same system (e.g. a validation "
            "plan's), with the model fitted on FOLDER unchanged; with --write, its check.csv goes there",
        ),
    ] = None,
    held_back_only: Annotated[
        bool,
        typer.Option(
            "--held-back-only",
            help="with --check-on: only the other folder's jobs the fit holds back (the same plan measured "
            "again, e.g. on another day: its QD1 and saturated jobs are the operating points fitted on)",
        ),
    ] = False,
    check_name: Annotated[
        str,
        typer.Option(
            "--check-name",
            help="with --check-on and --write: the file name of the other folder's check table",
        ),
    ] = "check.csv",
) -> None:
    """Fit a model of the measured system on its QD1 and saturated rows, and check it on the rest: the
    parameters with their intervals and rows, every held-back point measured beside predicted, and the
    share within the calibration's tolerances. With --check-on, the same for another folder's points."""
    from storagelab.measured.model import FitError
    from storagelab.measured.system import MeasuredSystem

    try:
        system = MeasuredSystem.load(folder)
        fitted = system.fit()
        other = MeasuredSystem.load(check_on) if check_on is not None else None
    except (FitError, FileNotFoundError) as err:
        _fail(err)
    typer.echo(system.describe())
    params = fitted.parameters()
    table = system.check(fitted)
    _echo_tables(params.drop("fitted_on"), str_lengths=90)
    _echo_tables(table.select(_shown(table)), str_lengths=30)
    within = system.within(table)
    typer.echo(
        f"fitted on {fitted.rows['job'].n_unique()} jobs; held back {table['job'].n_unique()} jobs: "
        f"{within['within']} of {within['points']} points within tolerance ({100 * within['share']:.1f} %; "
        f"IOPS {100 * within['share_iops']:.1f} %, mean latency {100 * within['share_lat_mean']:.1f} %)"
        + _coverage(within)
    )
    for note in fitted.notes:
        typer.echo(f"note: {note}")
    unsteady = unsteady_note(system.rows, folder)
    if unsteady:
        typer.echo(unsteady)
    if write:
        params.write_csv(folder / "fit.csv")
        table.write_csv(folder / "check.csv")
        typer.echo(f"written: {folder / 'fit.csv'}, {folder / 'check.csv'}")
    if other is not None and check_on is not None:
        try:
            if held_back_only:
                from storagelab.measured.model import split

                blind = system.check(fitted, split(other.rows)[1])
            else:
                blind = system.check(fitted, other.rows)
        except ValueError as err:
            _fail(ValueError(f"{check_on}: {err}"))
        _echo_tables(blind.select(_shown(blind)), str_lengths=30)
        shares = system.within(blind)
        typer.echo(
            f"checked on {check_on} ({other.describe()}), none of it fitted on: {blind['job'].n_unique()} jobs, "
            f"{shares['within']} of {shares['points']} points within tolerance ({100 * shares['share']:.1f} %; "
            f"IOPS {100 * shares['share_iops']:.1f} %, mean latency {100 * shares['share_lat_mean']:.1f} %)"
            + _coverage(shares)
        )
        if write:
            blind.write_csv(check_on / check_name)
            typer.echo(f"written: {check_on / check_name} (predicted by the model fitted on {folder})")


def _shown(table: Any) -> list[str]:
    """The columns of a check table printed: measured beside predicted, and the predictive interval when
    the check has one."""
    cols = ["job", "direction", "metric", "measured", "predicted", "error_pct", "tolerance", "within"]
    return cols + [c for c in ("pi_low", "pi_high", "covered") if c in table.columns]


def _coverage(shares: dict[str, float]) -> str:
    """The 80 % predictive intervals' coverage, when the check has them."""
    if "coverage" not in shares:
        return ""
    return f"; 80 % predictive intervals cover {shares['covered']} ({100 * shares['coverage']:.1f} %)"


@app.command("compare")
def compare_measured(
    mix: Annotated[Path, typer.Argument(help="workload mix YAML (a file, or the mix: key of a params file)")],
    measured: Annotated[
        list[Path] | None, typer.Option("--measured", help="a measured system's dataset folder (repeatable)")
    ] = None,
    preset: Annotated[
        list[str] | None, typer.Option("--preset", help="a preset to set beside it (repeatable)")
    ] = None,
    duration_s: Annotated[float, typer.Option(help="simulated seconds per run of each search")] = 2.0,
    replications: Annotated[int, typer.Option(help="independent searches per architecture")] = 3,
    high: Annotated[float, typer.Option(help="the highest load multiplier searched")] = 4.0,
    seed: Annotated[int, typer.Option(help="first seed")] = 1,
    workers: Annotated[
        int | None, typer.Option(help="processes searching in parallel (default: one per core)")
    ] = None,
    uncertainty: Annotated[
        int,
        typer.Option(
            help="draws of the uncertain parameters (more than 8, e.g. 16): each architecture's headroom "
            "with its 80 % interval, P(meets the mix), P(meets --growth), the pairwise ranking "
            "probabilities and what to measure; 0: off"
        ),
    ] = 0,
    growth: Annotated[
        float, typer.Option(help="with --uncertainty: the mix's growth target (a multiplier)")
    ] = 2.0,
    discrepancy_from: Annotated[
        Path | None,
        typer.Option(
            help="with --uncertainty: a calibration CSV (storagelab calibrate --uncertainty N --out ...) whose "
            "in-study claims give the models' discrepancy band, e.g. notebooks/calibration-quick.csv"
        ),
    ] = None,
    max_events: Annotated[
        int | None, typer.Option(help="stop with an error if a run processes more events than this")
    ] = None,
    max_wall_s: Annotated[
        float | None, typer.Option(help="stop with an error if a run takes more wall-clock seconds than this")
    ] = None,
) -> None:
    """The headroom of each measured system (its fitted model) and each preset on one workload mix; with
    --uncertainty, the decision under what the models do not know (notebook 19's decision table)."""
    from storagelab import studies
    from storagelab.analysis.comparison import Settings, compare
    from storagelab.analysis.workload_mix import WorkloadMix
    from storagelab.calibration.discrepancy import pooled_band
    from storagelab.calibration.results import CalibrationResult
    from storagelab.measured.model import FitError
    from storagelab.measured.system import MeasuredSystem

    # every check on the input before the first simulation
    if not measured and not preset:
        _fail(ValueError("compare needs at least one architecture: --measured FOLDER or --preset NAME"))
    if workers is not None and workers < 1:
        _fail(ValueError(f"--workers must be >= 1, got {workers}"))
    if uncertainty < 0 or 0 < uncertainty <= 8:
        _fail(ValueError(f"--uncertainty must be 0 (off) or more than 8 draws, e.g. 16; got {uncertainty}"))
    if not (math.isfinite(growth) and growth > 0):
        _fail(ValueError(f"--growth is the mix's growth target, a multiplier > 0; got {growth}"))
    if not uncertainty and discrepancy_from is not None:
        _fail(ValueError("--discrepancy-from applies only with --uncertainty N (N > 8 draws)"))
    try:
        mix_ = WorkloadMix.from_yaml(mix)
        candidates = []
        for folder in measured or []:
            system = MeasuredSystem.load(folder)
            candidates.append(system.candidate(system.fit()))
        candidates += [studies.candidate(p, p) for p in preset or []]
        band = pooled_band(CalibrationResult.read_csv(discrepancy_from).table) if discrepancy_from else None
    except (FitError, FileNotFoundError, ValueError) as err:
        _fail(err)
    from storagelab.kernel.run_limits import RunLimitReached

    try:
        settings = Settings(duration_s=duration_s, warmup_s=min(0.5, duration_s / 4), replications=replications,
                            high=high, seed=seed, max_events=max_events, max_wall_s=max_wall_s)  # fmt: skip
    except ValueError as err:
        _fail(err)
    try:
        result = compare(mix_, candidates, settings, workers=workers, uncertainty=uncertainty, growth=growth,
                         discrepancy=band)  # fmt: skip
    except RunLimitReached as err:
        _fail(err)
    _echo_tables(result.table(), str_lengths=60)
    if result.decision is not None:
        typer.echo("\nThe decision under uncertainty (headroom in multiples of the mix, 80 % interval):")
        _echo_tables(result.decision.table(), str_lengths=60)
        typer.echo("\nP(the row's headroom > the column's):")
        _echo_tables(result.decision.pairwise(), str_lengths=40)
        typer.echo("\nWhat to measure next:")
        _echo_tables(result.decision.what_to_measure(), str_lengths=200)

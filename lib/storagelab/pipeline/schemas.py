"""The notebooks' parameter schemas: one pydantic model per notebook, registered in :data:`SCHEMAS`
(read and checked by :mod:`storagelab.pipeline.params`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from storagelab.analysis.workload_mix import WorkloadMix

if TYPE_CHECKING:
    from storagelab.analysis.comparison import Candidate

StudyId = Literal["nexgen", "vsan", "ds5020", "vplex", "ilio"]


class NotebookParams(BaseModel):
    """Base of every notebook's parameter schema: no unknown keys, no silent type coercion."""

    model_config = ConfigDict(extra="forbid", strict=True)


class PublishedResultsParams(NotebookParams):
    """Parameters of ``00-published-results``: which studies to show and how to fit their curves."""

    studies: list[StudyId] = Field(
        default=["nexgen", "vsan", "ds5020", "vplex", "ilio"],
        min_length=1,
        description="studies whose rows are tabulated",
    )
    confidence: float = Field(default=0.95, gt=0.5, lt=1.0, description="level of every CI and band")
    service_level_distribution: Literal["lognormal", "weibull"] = Field(
        default="lognormal", description="family fitted to the share-of-IOs-under-t points"
    )
    max_population: int = Field(
        default=128,
        ge=4,
        le=4096,
        description="largest VM count the Virtual SAN throughput curves are drawn to",
    )


class KernelValidationParams(NotebookParams):
    """Parameters of ``01-kernel-validation``: replications and run length of the validation runs."""

    seed: int = Field(default=1, ge=0, description="seed of the first replication (then seed+1, ...)")
    replications: int = Field(default=5, ge=2, le=100, description="independent runs per scenario")
    duration_s: float = Field(default=10.0, gt=1.0, le=3600.0, description="simulated seconds per run")
    warmup_s: float = Field(default=1.0, ge=0.0, le=600.0, description="simulated seconds discarded first")
    confidence: float = Field(default=0.95, gt=0.5, lt=1.0, description="level of the replication CIs")

    @model_validator(mode="after")
    def _warmup_shorter_than_run(self) -> KernelValidationParams:
        if self.warmup_s >= self.duration_s:
            raise ValueError(
                f"warmup_s ({self.warmup_s}) must be shorter than duration_s ({self.duration_s})"
            )
        return self


#: The calibration run every notebook and the README show: written by ``make calibration``
#: (``storagelab calibrate --quick --out notebooks/calibration-quick.csv``), checked by a test that
#: re-runs it.
CALIBRATION_CSV = "calibration-quick.csv"
#: The committed round-3 quick run, before each quantity was counted once and the mechanisms behind its
#: misses were built (notebook 10's recount).
CALIBRATION_BEFORE_CSV = "calibration-quick-round3.csv"
#: The committed envelope (out-of-study) run notebook 10 and the README show.
ENVELOPE_CSV = "envelope-quick.csv"


class CalibrationParams(NotebookParams):
    """Parameters of ``10-calibration``: which calibration run to show (the committed one, or a new run
    with the settings below), and which studies."""

    calibration_csv: str = Field(
        default=CALIBRATION_CSV,
        description="calibration table to show, relative to notebooks/ (empty: run the calibration now with "
        "quick/replications/perturbed_replications/seed/confidence)",
    )
    compare_with: str = Field(
        default=CALIBRATION_BEFORE_CSV,
        description="an earlier calibration table, relative to notebooks/, to recount against (empty: none)",
    )
    envelope_csv: str = Field(
        default=ENVELOPE_CSV,
        description="envelope claims table (out of study), relative to notebooks/ (empty: run the envelope "
        "claims now, quick, with seed)",
    )
    studies: list[StudyId] = Field(
        default=["ds5020", "vsan", "nexgen", "ilio", "vplex"],
        min_length=1,
        description="studies shown (and run, when calibration_csv is empty)",
    )
    quick: bool = Field(default=True, description="short runs (seconds of simulated time per scenario)")
    replications: int = Field(default=3, ge=2, le=50, description="independent runs per scenario")
    perturbed_replications: int = Field(
        default=1, ge=1, le=50, description="runs per scenario with capacity x0.5 and x2 (sensitivity check)"
    )
    seed: int = Field(default=1, ge=0, description="seed of the first replication (then seed+1, ...)")
    confidence: float = Field(default=0.95, gt=0.5, lt=1.0, description="level of the replication CIs")
    uncertainty: int = Field(
        default=16,
        ge=0,
        le=1024,
        description="draws of the uncertain parameters per scenario when the calibration runs now (0: none; "
        "a power of two keeps the Sobol' design balanced)",
    )

    @model_validator(mode="after")
    def _perturbed_at_most_main(self) -> CalibrationParams:
        if self.perturbed_replications > self.replications:
            raise ValueError(
                f"perturbed_replications ({self.perturbed_replications}) must not exceed replications "
                f"({self.replications})"
            )
        return self


def _check_overrides(notebook: str, overrides: dict[str, Any]) -> None:
    """Build the notebook's preset(s) with ``overrides``: an unknown name, a wrong unit or a value out of
    range raises, naming the preset, the parameter and what is allowed."""
    from storagelab import studies

    for name in _NOTEBOOK_PRESETS[notebook]:
        try:
            studies.build(name, **overrides)
        except ValueError as err:
            raise ValueError(f"key 'overrides': {err}") from None


#: The presets a per-study notebook builds (its ``overrides`` apply to each).
_NOTEBOOK_PRESETS: dict[str, tuple[str, ...]] = {
    "11-vsan-scaling": (
        "Virtual SAN 5.5, hybrid Xeon E5 v2", "Virtual SAN 5.5, hybrid Xeon E5 v3", "Virtual SAN 5.5, all-flash NVMe",
    ),
    "12-ds5020-mixed-tiles": ("DS5020 Express",),
    "13-nexgen-bootstorm": ("NexGen N5-150",),
    "14-ilio-vdi": ("EqualLogic PS6100E behind Atlantis ILIO",),
    "15-vplex-replication": ("VPLEX Metro + XtremIO (two sites)", "VPLEX Geo + XtremIO (two sites)"),
    "16-data-reduction": ("EqualLogic PS6100E behind Atlantis ILIO",),
    "18-host-cache": ("NexGen N5-150",),
}  # fmt: skip


class StudyRunParams(NotebookParams):
    """Common parameters of the per-study notebooks: the calibration run they show (the one notebook 10
    shows), preset overrides for their own simulations, run length, replications, seed."""

    calibration_csv: str = Field(
        default=CALIBRATION_CSV, description="calibration table shown for this study, relative to notebooks/"
    )
    overrides: dict[str, Any] = Field(
        default={},
        description="preset parameters to change in this notebook's simulations, by name (e.g. hosts: 8); "
        "the calibration table is not re-run",
    )
    quick: bool = Field(default=True, description="short runs (seconds of simulated time per scenario)")
    replications: int = Field(default=2, ge=2, le=50, description="independent runs per scenario")
    seed: int = Field(default=1, ge=0, description="seed of the first replication (then seed+1, ...)")

    #: The notebook this schema belongs to (set by each subclass), for checking ``overrides``.
    notebook: ClassVar[str] = ""

    @model_validator(mode="after")
    def _overrides_build(self) -> StudyRunParams:
        if self.overrides and self.notebook:
            _check_overrides(self.notebook, self.overrides)
        return self


class VsanScalingParams(StudyRunParams):
    """Parameters of ``11-vsan-scaling``: the VM counts swept for each configuration."""

    notebook: ClassVar[str] = "11-vsan-scaling"
    vm_counts: list[int] = Field(
        default=[4, 8, 16, 32, 64, 96], min_length=1, description="VM counts simulated (each 1..256)"
    )

    @model_validator(mode="after")
    def _counts_in_range(self) -> VsanScalingParams:
        bad = [n for n in self.vm_counts if not 1 <= n <= 256]
        if bad:
            raise ValueError(f"vm_counts must each be in 1..256, got {bad}")
        return self


class Ds5020TilesParams(StudyRunParams):
    """Parameters of ``12-ds5020-mixed-tiles``."""

    notebook: ClassVar[str] = "12-ds5020-mixed-tiles"


class NexgenBootstormParams(StudyRunParams):
    """Parameters of ``13-nexgen-bootstorm``."""

    notebook: ClassVar[str] = "13-nexgen-bootstorm"


class IlioVdiParams(StudyRunParams):
    """Parameters of ``14-ilio-vdi``: desktop counts behind Atlantis ILIO."""

    notebook: ClassVar[str] = "14-ilio-vdi"
    desktop_counts: list[int] = Field(
        default=[75, 150, 300, 500], min_length=1, description="desktops behind ILIO (each 1..2000)"
    )

    @model_validator(mode="after")
    def _counts_in_range(self) -> IlioVdiParams:
        bad = [n for n in self.desktop_counts if not 1 <= n <= 2000]
        if bad:
            raise ValueError(f"desktop_counts must each be in 1..2000, got {bad}")
        return self


class VplexReplicationParams(StudyRunParams):
    """Parameters of ``15-vplex-replication``: the WAN round trips of the Metro sweep, and the Geo run's
    own overrides (on top of ``overrides``, which apply to Metro and Geo)."""

    notebook: ClassVar[str] = "15-vplex-replication"
    rtts_ms: list[float] = Field(
        default=[0.0, 1.0, 2.0, 5.0, 10.0],
        min_length=1,
        description="WAN round trips of the Metro sweep (each 0..100 ms)",
    )
    geo: dict[str, Any] = Field(
        default={"wan_bandwidth": "125 MB/s", "delta_cycle": "2 s", "delta_buffer": 0.3},
        description="VPLEX Geo parameters for the drain-rate run and the drill, by name (e.g. delta_cycle: 30 s)",
    )

    @model_validator(mode="after")
    def _rtts_and_geo(self) -> VplexReplicationParams:
        bad = [r for r in self.rtts_ms if not 0 <= r <= 100]
        if bad:
            raise ValueError(f"rtts_ms must each be in 0..100, got {bad}")
        from storagelab.studies import build

        try:
            build("VPLEX Geo + XtremIO (two sites)", **{**self.overrides, **self.geo})
        except ValueError as err:
            raise ValueError(f"geo (with overrides): {err}") from None
        return self


class DataReductionParams(StudyRunParams):
    """Parameters of ``16-data-reduction``: what is swept around the ILIO preset."""

    notebook: ClassVar[str] = "16-data-reduction"
    unique_shares: list[float] = Field(
        default=[1.0, 2.5, 5.0, 10.0, 20.0],
        min_length=1,
        description="unique share of content swept (each 0..100 %)",
    )
    ram_gb: list[float] = Field(
        default=[4.0, 8.0, 16.0, 170.0], min_length=1, description="ILIO RAM per host swept (each 1..1024 GB)"
    )
    desktops: int = Field(
        default=75, ge=1, le=2000, description="desktops in the array-load runs (75 per host)"
    )
    capacity_desktops: list[int] = Field(
        default=[75, 150, 300, 500, 750, 1000],
        min_length=1,
        description="desktop counts of the capacity curve",
    )

    @model_validator(mode="after")
    def _ranges(self) -> DataReductionParams:
        bad = [v for v in self.unique_shares if not 0 <= v <= 100] + [
            v for v in self.ram_gb if not 1 <= v <= 1024
        ]
        bad += [n for n in self.capacity_desktops if not 1 <= n <= 10000]
        if bad:
            raise ValueError(
                f"unique_shares must be in 0..100, ram_gb in 1..1024, capacity_desktops in 1..10000; got {bad}"
            )
        return self


class QosPromisesParams(NotebookParams):
    """Parameters of ``17-qos-promises``: the settings swept on one device and the windows checked."""

    notebook: ClassVar[str] = "17-qos-promises"
    capacity_iops: float = Field(
        default=1000.0, ge=10.0, le=1e6, description="the device's IOPS (1 / mean service time)"
    )
    reservations: list[float] = Field(
        default=[100, 200, 300, 400, 500, 600, 700],
        min_length=1,
        description="reservation of each of two tenants (IOPS)",
    )
    limits: list[float] = Field(
        default=[50, 100, 200, 400, 800], min_length=1, description="limits swept (IOPS)"
    )
    weight_ratios: list[float] = Field(
        default=[1, 2, 4, 8], min_length=1, description="weight of the heavier tenant (the other: 1)"
    )
    background_iops: list[float] = Field(
        default=[0, 100, 200, 400, 600, 700],
        min_length=1,
        description="background IO that bypasses the scheduler (IOPS)",
    )
    window_s: float = Field(
        default=0.1, gt=0.0, le=10.0, description="length of the windows a promise is checked over (s)"
    )
    duration_s: float = Field(
        default=3.0,
        gt=1.0,
        le=600.0,
        description="simulated seconds per setting (the first 0.5 s are not checked)",
    )
    seed: int = Field(default=1, ge=0, description="seed of every run")

    @model_validator(mode="after")
    def _positive(self) -> QosPromisesParams:
        bad = [v for v in (*self.reservations, *self.limits, *self.weight_ratios) if not v > 0]
        bad += [v for v in self.background_iops if v < 0]
        if bad:
            raise ValueError(
                f"reservations, limits and weight_ratios must be > 0 and background_iops >= 0; got {bad}"
            )
        if self.window_s >= self.duration_s - 0.5:
            raise ValueError(
                f"window_s ({self.window_s}) must be shorter than the checked part of duration_s ({self.duration_s} - 0.5)"
            )
        return self


class HostCacheParams(StudyRunParams):
    """Parameters of ``18-host-cache``: the cache sizes swept and the scaled warm-up run."""

    notebook: ClassVar[str] = "18-host-cache"
    cache_gb_per_vm: list[float] = Field(
        default=[0, 5, 12.5, 25, 37.5, 50, 100],
        min_length=1,
        description="ioTurbine cache per SQL VM (each 0..196.25 GB)",
    )
    warmup_scale: float = Field(
        default=0.002,
        gt=0.0,
        le=1.0,
        description="database disk of the warm-up run as a share of the study's 50 GB",
    )
    warmup_duration_s: float = Field(
        default=30.0, gt=1.0, le=3600.0, description="simulated seconds of the warm-up run"
    )

    @model_validator(mode="after")
    def _sizes(self) -> HostCacheParams:
        bad = [v for v in self.cache_gb_per_vm if not 0 <= v <= 785 / 4]
        if bad:
            raise ValueError(
                f"cache_gb_per_vm must each be in 0..196.25 (a quarter of the 785 GB card), got {bad}"
            )
        return self


class CandidateSpec(NotebookParams):
    """An architecture in ``19-compare-architectures``: a preset with overrides (and optionally a placement
    of workload kinds on its volumes), or a published curve (``family/series``)."""

    label: str = Field(min_length=1, description="the architecture's name in charts")
    preset: str | None = Field(
        default=None, description="an architecture preset (storagelab.studies.PRESETS)"
    )
    overrides: dict[str, Any] = Field(
        default={}, description="preset parameters changed, by name (e.g. hosts: 8)"
    )
    placement: dict[str, list[str]] | None = Field(
        default=None, description="workload kind -> volumes; default: the preset's"
    )
    curve: str | None = Field(
        default=None,
        description="a published curve: vsan_throughput/<series> or ds5020_response_time/<series>",
    )

    def candidate(self) -> Candidate:
        """The :class:`~storagelab.analysis.comparison.Candidate` this spec describes."""
        from storagelab import studies
        from storagelab.analysis.comparison import Candidate

        if self.preset is not None and self.curve is None:
            return studies.candidate(
                self.label, self.preset, overrides=self.overrides, placement=self.placement
            )
        return Candidate(self.label, preset=self.preset, overrides=self.overrides, placement=self.placement,
                         curve=self.curve)  # fmt: skip

    @model_validator(mode="after")
    def _builds(self) -> CandidateSpec:
        self.candidate().check()
        return self


def _default_mix() -> dict[str, Any]:
    return {
        "name": "NexGen study mix",
        "classes": [
            {"name": "oltp", "workload": "oltp", "size": 4.0, "service_level": {"metric": "p95_ms", "limit_ms": 30.0},
             "within_min": 5.0, "think_ms": 100.0},
            {"name": "exchange", "workload": "exchange", "size": 400.0,
             "service_level": {"metric": "mean_ms", "limit_ms": 20.0}, "within_min": 5.0, "think_ms": 100.0},
            {"name": "vdi", "workload": "boot_storm", "size": 600.0, "service_level": {"metric": "p95_ms", "limit_ms": 30.0},
             "within_min": 5.0, "think_ms": 100.0},
        ],
    }  # fmt: skip


_DEFAULT_CANDIDATES: list[dict[str, Any]] = [
    {"label": "NexGen N5-150, QoS on", "preset": "NexGen N5-150", "overrides": {"qos": 1}},
    {"label": "Virtual SAN all-flash, 4 hosts", "preset": "Virtual SAN 5.5, all-flash NVMe"},
    {"label": "Virtual SAN hybrid (E5 v3), 4 hosts", "preset": "Virtual SAN 5.5, hybrid Xeon E5 v3"},
    {"label": "XtremIO, 1 X-Brick", "preset": "XtremIO, 1 X-Brick(s)"},
    {"label": "EqualLogic PS6100E", "preset": "EqualLogic PS6100E"},
    {"label": "Virtual SAN all-flash, published curve", "curve": "vsan_throughput/all-flash NVMe"},
]
_DEFAULT_WHAT_IF: list[dict[str, Any]] = [
    {
        "label": "Virtual SAN all-flash, 8 hosts",
        "preset": "Virtual SAN 5.5, all-flash NVMe",
        "overrides": {"hosts": 8},
    },
]


#: What a comparison's ``uncertainty`` parameter is (notebooks 19 and 20).
UNCERTAINTY_DRAWS = (
    "draws of the uncertain parameters each candidate built from a preset or a measured fit is also searched "
    "at, for its headroom's 80 % interval, the ranking probabilities and what to measure (0: none; otherwise "
    "more than 8, a power of two such as 16)"
)


def _check_draws(n: int) -> None:
    """A comparison's draws: none, or enough to rank what moves a headroom (more than 8)."""
    if 0 < n <= 8:
        raise ValueError(
            f"uncertainty is 0 (none) or more than 8 draws (to rank what moves a headroom), got {n}"
        )


class CompareArchitecturesParams(NotebookParams):
    """Parameters of ``19-compare-architectures``: the mix with its service levels, the architectures
    compared, the what-if pair, and how each headroom is searched."""

    notebook: ClassVar[str] = "19-compare-architectures"
    mix: WorkloadMix = Field(default_factory=lambda: WorkloadMix.model_validate(_default_mix()),
                             description="the workload mix: name and classes (workload, size, service_level)")  # fmt: skip
    candidates: list[CandidateSpec] = Field(
        default_factory=lambda: [CandidateSpec.model_validate(c) for c in _DEFAULT_CANDIDATES],
        min_length=1,
        description="the architectures compared (label, and preset with overrides and placement, or curve)",
    )
    what_if: list[CandidateSpec] = Field(
        default_factory=lambda: [CandidateSpec.model_validate(c) for c in _DEFAULT_WHAT_IF],
        max_length=4,
        description="what-if architectures, each set beside the candidates built from the same preset",
    )
    duration_s: float = Field(default=2.0, gt=0.5, le=3600.0, description="simulated seconds per run")
    warmup_s: float = Field(default=0.5, ge=0.0, le=600.0, description="simulated seconds discarded first")
    replications: int = Field(default=3, ge=2, le=50, description="independent searches per architecture")
    low: float = Field(default=0.125, gt=0.0, le=1.0, description="lowest load multiplier searched")
    high: float = Field(
        default=8.0, ge=1.0, le=100.0,
        description="highest load multiplier searched: the cap (a headroom that holds there is at least it)",
    )  # fmt: skip
    tolerance: float = Field(default=0.1, gt=0.0, lt=1.0, description="relative width the bisection stops at")
    seed: int = Field(default=1, ge=0, description="seed of the first replication (then seed+1, ...)")
    uncertainty: int = Field(default=16, ge=0, le=256, description=UNCERTAINTY_DRAWS)
    growth: float = Field(default=2.0, gt=0.0, le=100.0, description="the mix's growth target, a multiplier")
    discrepancy_from: str = Field(
        default=CALIBRATION_CSV,
        description="the committed calibration run (relative to notebooks/) whose in-study claims give the "
        "model-discrepancy band added to each headroom ('': none)",
    )

    @model_validator(mode="after")
    def _runs(self) -> CompareArchitecturesParams:
        if self.warmup_s >= self.duration_s:
            raise ValueError(
                f"warmup_s ({self.warmup_s}) must be shorter than duration_s ({self.duration_s})"
            )
        _check_draws(self.uncertainty)
        labels = [c.label for c in (*self.candidates, *self.what_if)]
        dup = sorted({x for x in labels if labels.count(x) > 1})
        if dup:
            raise ValueError(
                f"candidate labels must be distinct across candidates and what_if; repeated: {dup}"
            )
        return self


_YOUR_MIX: dict[str, Any] = {
    "name": "database and mail",
    "classes": [
        {"name": "oltp", "workload": "oltp", "size": 16.0, "service_level": {"metric": "p95_ms", "limit_ms": 10.0}},
        {"name": "exchange", "workload": "exchange", "size": 1600.0,
         "service_level": {"metric": "mean_ms", "limit_ms": 10.0}},
    ],
}  # fmt: skip
_YOUR_CANDIDATES: list[dict[str, Any]] = [
    {"label": "XtremIO, 1 X-Brick", "preset": "XtremIO, 1 X-Brick(s)"},
    {"label": "EqualLogic PS6100E", "preset": "EqualLogic PS6100E"},
]


class CrossCheck(BaseModel):
    """One committed check table of a measured system (``storagelab fit ... --check-on``): the model it was
    predicted with, the points it holds, and its path relative to notebooks/."""

    model_config = ConfigDict(extra="forbid", strict=True)
    model: str = Field(min_length=1, description="the dataset the model was fitted on")
    points: str = Field(min_length=1, description="which points were predicted")
    table: str = Field(min_length=1, description="the check table (check*.csv), relative to notebooks/")


_D1, _D2 = "`vda-ext4` (day 1)", "`vda-ext4-day2` (day 2)"
#: Issue 71's four checks on this machine's disk (`make measured` writes the tables): each day's model on
#: each day's held-back and blind validation points.
_DISK_CHECKS = (
    (_D1, "held-back points of day 1", "../measurements/vda-ext4/check.csv"),
    (_D1, "validation points of day 1", "../measurements/vda-ext4-validation/check.csv"),
    (_D1, "held-back points of day 2", "../measurements/vda-ext4-day2/check-by-vda-ext4.csv"),
    (_D1, "validation points of day 2", "../measurements/vda-ext4-validation-day2/check-by-vda-ext4.csv"),
    (_D2, "held-back points of day 2", "../measurements/vda-ext4-day2/check.csv"),
    (_D2, "validation points of day 2", "../measurements/vda-ext4-validation-day2/check.csv"),
    (_D2, "held-back points of day 1", "../measurements/vda-ext4/check-by-vda-ext4-day2.csv"),
    (_D2, "validation points of day 1", "../measurements/vda-ext4-validation/check-by-vda-ext4-day2.csv"),
)  # fmt: skip


class YourSystemParams(NotebookParams):
    """Parameters of ``20-your-system``: the measured system's dataset folder (and a validation folder
    measured after the fit was frozen), the mix to compare it on,
    the presets set beside it, and how each headroom is searched. The fit subset is the one
    :func:`storagelab.measured.model.split` states (QD1 and saturated read-only and write-only random jobs);
    everything else is held back."""

    notebook: ClassVar[str] = "20-your-system"
    dataset: str = Field(
        default="../measurements/vda-ext4",
        min_length=1,
        description="the measured system's folder (measurements.csv, provenance.json), relative to notebooks/",
    )
    label: str = Field(default="this machine's disk (fitted)", min_length=1, description="its name in charts")
    validation: str | None = Field(
        default="../measurements/vda-ext4-validation",
        min_length=1,
        description="another folder of the same system, measured after the fit was frozen at operating points "
        "not fitted on, predicted by the model unchanged (a blind check); null: none",
    )
    cross_checks: list[CrossCheck] = Field(
        default_factory=lambda: [CrossCheck(model=m, points=p, table=t) for m, p, t in _DISK_CHECKS],
        max_length=32,
        description="committed check tables of the system on other days (storagelab fit --check-on), tabulated "
        "side by side: within tolerance, mixed and pure, and the 80 % predictive intervals' coverage",
    )
    mix: WorkloadMix = Field(default_factory=lambda: WorkloadMix.model_validate(_YOUR_MIX),
                             description="the workload mix: name and classes (workload, size, service_level)")  # fmt: skip
    candidates: list[CandidateSpec] = Field(
        default_factory=lambda: [CandidateSpec.model_validate(c) for c in _YOUR_CANDIDATES],
        max_length=8,
        description="architectures set beside it (label, and preset with overrides and placement, or curve)",
    )
    duration_s: float = Field(default=1.0, gt=0.2, le=3600.0, description="simulated seconds per search run")
    warmup_s: float = Field(default=0.25, ge=0.0, le=600.0, description="simulated seconds discarded first")
    replications: int = Field(default=3, ge=2, le=50, description="independent searches per architecture")
    high: float = Field(default=16.0, ge=1.0, le=100.0, description="highest load multiplier searched")
    seed: int = Field(default=1, ge=0, description="seed of the check's simulations and the searches")
    uncertainty: int = Field(default=16, ge=0, le=256, description=UNCERTAINTY_DRAWS)

    @model_validator(mode="after")
    def _runs(self) -> YourSystemParams:
        if self.warmup_s >= self.duration_s:
            raise ValueError(
                f"warmup_s ({self.warmup_s}) must be shorter than duration_s ({self.duration_s})"
            )
        _check_draws(self.uncertainty)
        labels = [self.label, *(c.label for c in self.candidates)]
        dup = sorted({x for x in labels if labels.count(x) > 1})
        if dup:
            raise ValueError(f"labels must be distinct across label and candidates; repeated: {dup}")
        return self


class TheLabParams(NotebookParams):
    """Parameters of ``21-the-lab``: the lab's dataset folder (``storagelab lab``), the measured folder of the
    same disk whose fitted model the predictions put behind the cache and the throttle, and the seed."""

    notebook: ClassVar[str] = "21-the-lab"
    dataset: str = Field(
        default="../measurements/lab-vda",
        min_length=1,
        description="the lab's folder (cache.csv, throttle.csv, throttle_series.csv, provenance.json), "
        "relative to notebooks/",
    )
    device: str = Field(
        default="../measurements/vda-ext4",
        min_length=1,
        description="a storagelab measure folder of the same disk: the device model fitted on it is frozen "
        "as committed and put behind the predicted cache and throttle",
    )
    seed: int = Field(default=1, ge=0, description="seed of the predicted draws and simulations")


#: Notebook stem -> its parameter schema.
SCHEMAS: dict[str, type[NotebookParams]] = {
    "00-published-results": PublishedResultsParams,
    "01-kernel-validation": KernelValidationParams,
    "10-calibration": CalibrationParams,
    "11-vsan-scaling": VsanScalingParams,
    "12-ds5020-mixed-tiles": Ds5020TilesParams,
    "13-nexgen-bootstorm": NexgenBootstormParams,
    "14-ilio-vdi": IlioVdiParams,
    "15-vplex-replication": VplexReplicationParams,
    "16-data-reduction": DataReductionParams,
    "17-qos-promises": QosPromisesParams,
    "18-host-cache": HostCacheParams,
    "19-compare-architectures": CompareArchitecturesParams,
    "20-your-system": YourSystemParams,
    "21-the-lab": TheLabParams,
}

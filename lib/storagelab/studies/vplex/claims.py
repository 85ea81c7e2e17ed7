"""XtremIO (VPLEX study): native latency per IO size and direction at half the model's peak load (the
paper sizes XtremIO for 50 % of its peak), and the doubling of read bandwidth with a second X-Brick."""

from __future__ import annotations

from storagelab.calibration.claims import Point, Scenario
from storagelab.kernel import ClosedSource, FixedSampler, OpenSource
from storagelab.simulation import simulate
from storagelab.studies.fits import fits_of
from storagelab.studies.vplex import preset

STUDY = "vplex"
SIZES_KIB = (4, 8, 64, 256)


def latency_ms(size: int, is_read: bool, seed: int, quick: bool, load: float = 0.5) -> float:
    """Mean latency (ms) of open-loop IOs of one size and direction at ``load`` x the model's peak."""
    topo = preset.xtremio(1)
    rate = load * preset.capacity_iops(topo, is_read, size)
    lun = topo.volumes["lun"]
    src = OpenSource(
        "io", lun, FixedSampler(size=size, read_pct=100 if is_read else 0, span=10**11), rate=rate
    )
    dur = 2000 / rate if quick else 40000 / rate
    res = simulate(lun, [src], duration=dur + 0.1 * dur, warmup=0.1 * dur, seed=seed, progress=False)
    return float(res.summary()["mean_ms"][0])


def read_mbps(bricks: int, seed: int, quick: bool) -> float:
    """Read bandwidth (MB/s) of 256 KiB reads with 64 outstanding per brick."""
    topo = preset.xtremio(bricks)
    lun = topo.volumes["lun"]
    src = ClosedSource("reads", lun, FixedSampler(size=262144, span=10**11), workers=64 * bricks)
    res = simulate(lun, [src], duration=0.3 if quick else 3.0, warmup=0.05, seed=seed, progress=False)
    return float(res.summary()["mb_per_s"][0])


def scenarios() -> list[Scenario]:
    """Latency at half load for 4/8/64/256 KiB reads and writes; read MB/s with two bricks vs one."""
    points = tuple(
        Point(STUDY, "xio-latency-sub-ms", f"native XtremIO mean latency, {k} KiB {op}s at 50 % of peak (ms)",
              "at-most", "'sub millisecond IO response times'", case=f"{k} KiB {op}")
        for k in SIZES_KIB for op in ("read", "write")
    )  # fmt: skip

    def sub_ms(seed: int, quick: bool) -> dict[str, float]:
        return {
            p.key: latency_ms(int(p.case.split()[0]) * 1024, p.case.endswith("read"), seed, quick)
            for p in points
        }

    def two_bricks(seed: int, quick: bool) -> dict[str, float]:
        return {"local-raid1-read-bw-ratio": read_mbps(2, seed, quick) / read_mbps(1, seed, quick)}

    return [
        Scenario(STUDY, "XtremIO latency per IO size at half load", points, sub_ms),
        Scenario(
            STUDY,
            "read bandwidth, two X-Bricks vs one",
            (
                Point(
                    STUDY,
                    "local-raid1-read-bw-ratio",
                    "read MB/s of two X-Bricks over one (VPLEX local RAID-1)",
                    note="VPLEX itself is not modelled: reads spread over both bricks' capacity",
                ),
            ),
            two_bricks,
        ),
    ]


def fitted_on() -> dict[str, tuple[str, ...]]:
    """Fitted parameters of the XtremIO model and the points they were fitted on (none)."""
    return fits_of(*(preset.xtremio(b).params for b in preset.BRICKS))

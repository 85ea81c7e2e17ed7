"""The ILIO study's mechanisms as the document states them (issue 66 item 7, issue 67's Login VSI span):
the Login VSI run's change disks follow its desktops; a published peak is scored against the simulated
peak over the study's sampling interval; the 5 % unique share is a share of the written IO, not of the
capacity; the Tier-2 user data reach the EqualLogic without ILIO."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from storagelab.architectures.topology import Topology
from storagelab.studies.ilio import claims
from storagelab.studies.ilio.workloads import DESKTOP_DISK, DESKTOPS, login_vsi_run
from storagelab.workloads.catalogue.vdi import SPAN_PER_DESKTOP


class _Captured(Exception):
    """Raised by the patched ``Topology.run`` with the workload a scenario handed it."""

    def __init__(self, workload: object, kwargs: dict) -> None:
        super().__init__("captured")
        self.workload, self.kwargs = workload, kwargs


def _capture(monkeypatch: pytest.MonkeyPatch) -> None:
    def run(self: Topology, workload: object, **kwargs: object) -> None:
        raise _Captured(workload, kwargs)

    monkeypatch.setattr(Topology, "run", run)


def _scenario(title_part: str):
    return next(s for s in claims.scenarios() if title_part in s.name)


@settings(max_examples=40, deadline=None)
@given(desktops=st.integers(min_value=1, max_value=2_000), extra=st.booleans())
def test_the_login_vsi_run_spans_four_gb_of_change_disk_per_desktop(desktops, extra):
    """Login VSI's IOs address n x 4 GB (each session's change disk) and the extra Iometer writes n x
    32 GB, whatever n is."""
    w = login_vsi_run(desktops, extra_writes=extra)
    spans = {s.name: s.span for s in w.streams}
    assert spans["login vsi"] == desktops * SPAN_PER_DESKTOP
    if extra:
        assert spans["extra writes"] == desktops * DESKTOP_DISK
    else:
        assert set(spans) == {"login vsi"}


def test_the_scored_login_vsi_scenario_runs_the_studys_75_change_disks(monkeypatch):
    """The workload the calibration's Login VSI scenario simulates spans 75 x 4 GB (the study's 75
    sessions), not the 600 x 4 GB of the NexGen study's desktops."""
    _capture(monkeypatch)
    with pytest.raises(_Captured) as got:
        _scenario("Login VSI").run(1, True)
    spans = {s.name: s.span for s in got.value.workload.streams}
    assert spans["login vsi"] == DESKTOPS * SPAN_PER_DESKTOP

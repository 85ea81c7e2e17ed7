"""The applications the studies ran, as :class:`~storagelab.workloads.application.ApplicationWorkload`
generators, one module per application family:

- :mod:`~storagelab.workloads.catalogue.loadgen` — Exchange LoadGen 2010, Outlook_200;
- :mod:`~storagelab.workloads.catalogue.oltp` — DVD Store 2 OLTP on SQL Server (IOs per order fitted on the
  NexGen study's scenario 2);
- :mod:`~storagelab.workloads.catalogue.iometer` — Iometer's web-server mix and the 256 KB scan;
- :mod:`~storagelab.workloads.catalogue.vdi` — desktop boot storms (IOs per boot fitted on the ILIO study's
  Tier-1 peak) and the Login VSI steady state;
- :mod:`~storagelab.workloads.catalogue.backup` — backup-like sequential writing.

These are the generators more than one study, or the workload mix (:mod:`storagelab.analysis.workload_mix`),
uses. A generator that one study alone runs is in that study's ``workloads`` module: Jetstress, Orion and
the DS5020 characterization in :mod:`storagelab.studies.ds5020.workloads`, the ILIO extra writes and the
Atlantis VDI pattern in :mod:`storagelab.studies.ilio.workloads`, the Virtual SAN Iometer test in
:mod:`storagelab.studies.vsan.workloads`.
"""

from storagelab.workloads.catalogue.backup import backup_stream
from storagelab.workloads.catalogue.iometer import iometer_web_server, sequential_scan
from storagelab.workloads.catalogue.loadgen import loadgen_outlook_200
from storagelab.workloads.catalogue.oltp import dvd_store
from storagelab.workloads.catalogue.vdi import boot_storm, login_vsi

__all__ = [
    "backup_stream",
    "boot_storm",
    "dvd_store",
    "iometer_web_server",
    "loadgen_outlook_200",
    "login_vsi",
    "sequential_scan",
]

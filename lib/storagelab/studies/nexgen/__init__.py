"""The nexgen study: preset, workloads, calibration claims and notebook helpers (see :mod:`storagelab.studies`)."""

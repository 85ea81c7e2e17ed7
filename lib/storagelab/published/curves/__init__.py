"""Curves fitted to published results, each returning a :class:`CurveFit` with CIs and residuals.

- :func:`fit_closed_system`: throughput against population (exact MVA, respects closed-system bounds);
- :func:`fit_service_level`: share of IOs under ``t`` as a lognormal or Weibull distribution;
- :func:`fit_response_time`: response time against load, ``R = S / (1 - X/Xsat)``;
- :func:`fit_published`: all of the above on the source studies' datasets.
"""

from storagelab.published.curves.base import CurveFit, InsufficientData, Parameter
from storagelab.published.curves.closed_system import fit_closed_system, mva_throughput
from storagelab.published.curves.published import CurveSet, fit_published, vsan_littles_law_check
from storagelab.published.curves.response_time import fit_response_time
from storagelab.published.curves.service_level import fit_service_level

__all__ = [
    "CurveFit",
    "CurveSet",
    "InsufficientData",
    "Parameter",
    "fit_closed_system",
    "fit_published",
    "fit_response_time",
    "fit_service_level",
    "mva_throughput",
    "vsan_littles_law_check",
]

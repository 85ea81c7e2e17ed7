"""Checks of the simulator itself: validation against queueing theory
(:mod:`~storagelab.verify.validation`), the kernel benchmark (:mod:`~storagelab.verify.benchmark`) and the
headroom interval's coverage of exact answers (:mod:`~storagelab.verify.headroom_coverage`)."""

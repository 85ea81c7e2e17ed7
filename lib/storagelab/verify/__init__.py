"""Checks of the simulator itself: validation against queueing theory
(:mod:`~storagelab.verify.validation`) and the kernel benchmark (:mod:`~storagelab.verify.benchmark`)."""

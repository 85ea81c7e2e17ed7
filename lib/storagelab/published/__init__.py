"""The published wing: the five studies' numbers with provenance (:mod:`~storagelab.published.datasets`),
units (:mod:`~storagelab.published.units`) and curves fitted to them (:mod:`~storagelab.published.curves`).
It knows nothing of simulation."""

"""A user's own system: measure it with fio (safe by default), read fio's JSON results into one tidy
dataset with provenance, fit a model of it (a component on the kernel's interface, in a Topology), check
the model on the measurements it was not fitted on, and set it beside the presets.

- :mod:`~storagelab.measured.plan`: measurement plans (the default and a quick one, or YAML);
- :mod:`~storagelab.measured.target`: what may be measured (a file the command creates, unless a flag
  names the risk);
- :mod:`~storagelab.measured.run`: running a plan with fio, resumably, with provenance;
- :mod:`~storagelab.measured.results`: fio 3.x JSON in, tidy rows out;
- :mod:`~storagelab.measured.model`: the fitted model (a :class:`~storagelab.architectures.Topology` of one
  :mod:`batching stage <storagelab.measured.batching>`);
- :mod:`~storagelab.measured.check`: predictions of the held-back points and their errors;
- :mod:`~storagelab.measured.system`: a dataset folder end to end (load, fit, check, candidate).
"""

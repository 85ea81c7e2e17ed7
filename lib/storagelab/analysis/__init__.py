"""Analyses on any topology: the headroom of a workload under latency objectives
(:mod:`~storagelab.analysis.headroom`), the four corners (:mod:`~storagelab.analysis.four_corners`), workload
mixes (:mod:`~storagelab.analysis.workload_mix`), architectures side by side
(:mod:`~storagelab.analysis.comparison`) and the QoS schedulers' promises over windows
(:mod:`~storagelab.analysis.promises`)."""

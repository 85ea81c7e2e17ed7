"""A lab on this machine: a real cache (the Linux page cache held to a known size by a memory cgroup) and a
real limiter (the kernel's block throttle), measured with fio inside control groups the lab creates, and
predicted with the workbench's own cache component and token bucket in front of the device model that
``storagelab fit`` fitted on the same disk (issue 70).

- :mod:`~storagelab.lab.cgroup`: control groups (v1 memory + blkio, v2 memory.max + io.max), created under a
  unique name and removed at the end and on interruption; a refusal naming what is missing;
- :mod:`~storagelab.lab.plan`: the plan of operating points (YAML), committed before it is run;
- :mod:`~storagelab.lab.run`: fio in the groups, misses from the groups' device counters, provenance;
- :mod:`~storagelab.lab.predict`: the blind predictions and the share within tolerance per mechanism.
"""

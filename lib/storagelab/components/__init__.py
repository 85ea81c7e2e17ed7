"""Components built on the kernel: replicated clusters, RAID sets, caches and write-back buffers."""

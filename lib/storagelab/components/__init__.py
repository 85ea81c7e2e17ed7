"""Components built on the kernel: replicated clusters, RAID sets, caches and write-back buffers."""

import sys

from storagelab.kernel import native

native.activate(sys.modules[__name__])  # the compiled per-IO modules, if built and up to date

"""Process-wide settings of the ``quota`` command, applied before anything imports numpy.

numpy's OpenBLAS starts one thread per core, and they spin while the simulator works: on a
2-core machine up to a tenth of a 10k-job ``quota simulate``'s CPU time (``benchmarks/
bench_command.py``), for vector sums that gain nothing from threads. The command keeps BLAS to
one thread unless the user set ``OPENBLAS_NUM_THREADS`` themselves; worker processes inherit it.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

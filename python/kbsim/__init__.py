"""kbsim from Python: run benches on simulated multi-die AI accelerators and read their results.

    >>> import kbsim
    >>> r = kbsim.run("pe-dma-perf")
    >>> r.metrics["scenarios"]["local"]["makespan_ns"]

A run from Python is the ``kbsim run`` command run in this process: the same plugins, the same checks, the same
``results.json`` (docs/python.md). Every kbsim error is raised as a subclass of :class:`kbsim.Error` carrying the
command's one-line message and its exit code. A :class:`kbsim.Session` keeps a configured system open and drives its
host runtime (tensors from and to numpy, kernel launches) and its distributed runtime (``spawn`` of Python workers,
``all_reduce``).
"""

from . import _kbsim, _paths

_kbsim.set_bin_dir(_paths.BIN_DIR)

from ._errors import (BenchError, ConfigError, Error, InternalError, InterruptedRun, PluginError,  # noqa: E402
                      SimulationError, UsageError)
from ._blocks import Block, Port, Stat  # noqa: E402
from ._ccl import Collective, Launch, Pe, Setup, SystemShape, Wire  # noqa: E402
from ._plugins import BenchContext, Param, algorithm, bench, component, kernel  # noqa: E402
from ._kbsim import dtype_size  # noqa: E402
from ._kbsim import Message  # noqa: E402  (a block's message)
from ._run import Result, run  # noqa: E402
from ._session import Distributed, LaunchResult, Placement, Runtime, Session, Tensor  # noqa: E402
from ._sweep import PointError, frame, sweep  # noqa: E402
from ._system import SVG, System  # noqa: E402

__all__ = [
    "run", "Result", "sweep", "frame", "PointError", "System", "SVG",
    "bench", "kernel", "algorithm", "Param", "BenchContext", "Pe", "Wire", "Launch", "SystemShape", "Setup",
    "Collective", "dtype_size", "component", "Block", "Port", "Stat", "Message",
    "Session", "Runtime", "Distributed", "Tensor", "Placement", "LaunchResult",
    "Error", "UsageError", "ConfigError", "PluginError", "SimulationError", "BenchError", "InterruptedRun",
    "InternalError",
]

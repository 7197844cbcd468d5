"""kbsim from Python: run benches on simulated multi-die AI accelerators and read their results.

    >>> import kbsim
    >>> r = kbsim.run("pe-dma-perf")
    >>> r.metrics["scenarios"]["local"]["makespan_ns"]

A run from Python is the ``kbsim run`` command run in this process: the same plugins, the same checks, the same
``results.json`` (docs/python.md). Every kbsim error is raised as a subclass of :class:`kbsim.Error` carrying the
command's one-line message and its exit code.
"""

from ._errors import (BenchError, ConfigError, Error, InternalError, InterruptedRun, PluginError,
                      SimulationError, UsageError)
from ._run import Result, run
from ._sweep import PointError, frame, sweep
from ._system import SVG, System

__all__ = [
    "run", "Result", "sweep", "frame", "PointError", "System", "SVG",
    "Error", "UsageError", "ConfigError", "PluginError", "SimulationError", "BenchError", "InterruptedRun",
    "InternalError",
]

"""kbsim's errors as Python exceptions, one class per exit code of the ``kbsim`` command (docs/python.md)."""

from . import _kbsim


class Error(Exception):
    """A kbsim error: ``str(e)`` is the command line's one-line message, ``e.exit_code`` its exit code."""

    exit_code = 1

    def __init__(self, message, exit_code=None):
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code


class InternalError(Error):
    """A bug in kbsim (exit code 1)."""
    exit_code = 1


class UsageError(Error, ValueError):
    """A bad argument: an unknown bench or option, a malformed value (exit code 2)."""
    exit_code = 2


class ConfigError(Error, ValueError):
    """A bad topology, components file, parameter or --set override; names file:line:column (exit code 3)."""
    exit_code = 3


class PluginError(Error):
    """A plugin library could not be found, loaded or registered; names the library (exit code 4)."""
    exit_code = 4


class SimulationError(Error):
    """The simulation failed: a bad address, a stuck run, a component's fault; names it and the sim time (5)."""
    exit_code = 5


class BenchError(Error):
    """A bench ran but failed its own checks, or some of its sweep points failed (exit code 6)."""
    exit_code = 6


class InterruptedRun(Error, KeyboardInterrupt):
    """The run was stopped (Ctrl-C, SIGTERM); the results so far were written, marked interrupted (exit code 8)."""
    exit_code = 8


for _c in (Error, InternalError, UsageError, ConfigError, PluginError, SimulationError, BenchError, InterruptedRun):
    _c.__module__ = "kbsim"  # shown as kbsim.ConfigError, as users write it

_BY_CODE = {c.exit_code: c for c in (InternalError, UsageError, ConfigError, PluginError, SimulationError,
                                     BenchError, InterruptedRun)}
_BY_CODE[7] = SimulationError  # a fatal signal inside the run (the command line's 7): the component is named
_kbsim._register_errors(_BY_CODE)

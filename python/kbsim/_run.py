"""kbsim.run: one bench, as ``kbsim run`` runs it (docs/python.md)."""

import json
import os
import signal
import subprocess
import sys
import tempfile

from . import _kbsim, _paths
from ._errors import _BY_CODE, BenchError, Error, InterruptedRun, PluginError
from ._progress import display


class Result:
    """What a run wrote.

    ``metrics``: the bench's metrics (a dict); ``results``: the whole ``results.json`` (components, links, sim time,
    events, ...); ``files``: the files the run wrote beside it, name -> path (figures, index.html, topology.json);
    ``out``: that folder. Without ``out=``, the folder is a temporary one that lives as long as this Result.
    """

    def __init__(self, results, files, out, keep=None):
        self.results = results
        self.metrics = results.get("metrics", {})
        self.files = files
        self.out = out
        self._keep = keep  # the temporary folder, removed with this Result

    @property
    def sim_time_ns(self):
        return self.results["sim_time_ns"]

    @property
    def events(self):
        return self.results["events"]

    def components_frame(self):
        """Every component's statistics as a pandas DataFrame, one row per component (needs pandas)."""
        import pandas as pd
        rows = [dict(component=name, **stats) for name, stats in self.results.get("components", {}).items()]
        return pd.DataFrame(rows)

    def links_frame(self):
        """Every link's traffic as a pandas DataFrame, one row per link (needs pandas)."""
        import pandas as pd
        return pd.DataFrame(list(self.results.get("links", [])))

    def __repr__(self):
        return "<kbsim.Result bench={} sim_time_ns={} events={}>".format(
            self.results.get("bench"), self.results.get("sim_time_ns"), self.results.get("events"))


def _words(option, values):
    out = []
    for key, value in values.items():
        if isinstance(value, bool):
            value = "true" if value else "false"
        out += [option, "{}={}".format(key, value)]
    return out


def command_args(topology=None, plugins=(), set=None, verify_data=False, trace=None, op_log=None, flags=None):
    """The command line options shared by kbsim.run and kbsim.Session, from their keyword arguments."""
    args = _words("--set", dict(set or {}))
    if topology is not None:
        args += ["--topology", os.fspath(topology)]
    for d in plugins:
        args += ["--plugins", os.fspath(d)]
    all_flags = dict(flags or {})
    if verify_data:
        all_flags["verify-data"] = True
    if trace is not None:
        all_flags["trace"] = os.fspath(trace)
    if op_log is not None:
        all_flags["op-log"] = os.fspath(op_log)
    for name, value in all_flags.items():
        if value is True:
            args.append("--" + name)
        elif value is not False and value is not None:
            args += ["--" + name, str(value)]
    return args


def read_result(folder, keep=None):
    """The Result a run wrote into ``folder``."""
    with open(os.path.join(folder, "results.json")) as f:
        results = json.load(f)
    files = {name: os.path.join(folder, name) for name in sorted(os.listdir(folder)) if name != "results.json"}
    return Result(results, files, folder, keep)


def run(bench, params=None, set=None, topology=None, plugins=(), verify_data=False, trace=None, op_log=None,
        out=None, flags=None, jobs=None, quiet=False, progress=None, isolate=False):
    """Run a bench to completion and return its :class:`Result`.

    bench: its name (``kbsim list benches``). params: ``{key: value}``, as ``--param key=value``. set: ``{dotted.path:
    value}``, as ``--set`` (a configuration section's ``ccl.KEY`` included). topology: a topology file (default: the
    default system). plugins: plugin directories searched first. verify_data, trace (a file), op_log (a file): the
    run observers' flags; flags: any other declared flag, ``{name: value}`` (True for a bare flag). out: the folder
    results.json and the bench's files go to (default: a temporary one that lives as long as the Result). jobs: worker
    processes for a sweep's points. quiet: drop the summary the command prints. progress: show the run's progress
    (True, False; default: when a terminal or a Jupyter kernel is watching). isolate: run the ``kbsim`` command in a
    child process instead of this one, so a plugin that crashes (a fatal signal in its code) is reported as the
    command reports it (:class:`SimulationError`, exit code 7) instead of ending the interpreter. A run whose plugin
    directories hold Python plugins (``*.py``) is always isolated: they run in a kbsim process's own interpreter.

    Ctrl-C stops the run at its next heartbeat; the results so far are written and :class:`InterruptedRun` (a
    KeyboardInterrupt) is raised, its ``result`` holding them.
    """
    if not isinstance(bench, str):
        raise TypeError("bench must be a str (a bench name), not {}".format(type(bench).__name__))
    args = ["run", "--bench", bench] + _words("--param", dict(params or {}))
    args += command_args(topology, plugins, set, verify_data, trace, op_log, flags)
    if jobs is not None:
        args += ["--jobs", str(int(jobs))]
    keep = tempfile.TemporaryDirectory(prefix="kbsim-") if out is None else None
    folder = keep.name if keep is not None else os.fspath(out)
    args += ["--out", folder]
    if isolate or _python_plugins(plugins):
        code = _child(args, quiet)
    else:
        shown = display(bench, progress)
        try:
            code = _kbsim.command_line(args, quiet=quiet, progress=shown)
        except PluginError as e:
            # The run needs a Python plugin file among kbsim's own (llama-layer): refused before anything ran, it
            # runs as a kbsim process of its own, as a run with a plugin directory of Python plugins does.
            if _IN_A_KBSIM_PROCESS not in str(e):
                raise
            code = _child(args, quiet)
        finally:
            if shown is not None:
                shown.close()
        if code == BenchError.exit_code and _points_needed_a_kbsim_process(folder):
            code = _child(args, quiet)  # a sweep whose points are such a bench (milestone-llama): the same, again
    if code not in (0, BenchError.exit_code, InterruptedRun.exit_code):
        raise Error("kbsim run ended with exit code {} and no error".format(code), code)
    result = read_result(folder, keep)
    if code == InterruptedRun.exit_code:
        e = InterruptedRun("bench {} was interrupted; the results so far are in {}".format(bench, folder))
        e.result = result
        raise e
    if code == BenchError.exit_code:
        e = BenchError("some of bench {}'s sweep points failed (their errors are in {})".format(
            bench, os.path.join(folder, "points.json")))
        e.result = result
        raise e
    return result


_IN_A_KBSIM_PROCESS = "Python plugins run in a kbsim process, not in this interpreter"


def _points_needed_a_kbsim_process(folder):
    """Whether a sweep's points failed because they need a Python plugin file, which only a kbsim process runs."""
    try:
        with open(os.path.join(folder, "points.json")) as f:
            points = json.load(f).get("points", [])
    except (OSError, ValueError):
        return False
    return any(_IN_A_KBSIM_PROCESS in str(p.get("error", "")) for p in points)


def _python_plugins(dirs):
    """Whether a plugin directory holds Python plugins: a run that may load them is a kbsim process of its own (the
    interpreter embedded there runs them; sdk/README.md, "Write it in Python")."""
    dirs = [os.fspath(d) for d in dirs] + os.environ.get("KBSIM_PLUGIN_PATH", "").split(":")
    return any(n.endswith(".py") and not n.startswith(("_", ".")) for d in dirs if d and os.path.isdir(d)
               for n in os.listdir(d))


def _child(args, quiet):
    """Run ``kbsim ARGS`` as a child process: its exit code, or its one-line error raised as this module raises it."""
    # Its own session: a Ctrl-C reaches it through this process, which stops it as the command's Ctrl-C does (at
    # its next heartbeat, the results so far written).
    child = subprocess.Popen([os.path.join(_paths.BIN_DIR, "kbsim"), *args], start_new_session=True,
                             stdout=subprocess.DEVNULL if quiet else None, stderr=subprocess.PIPE, text=True)
    while True:
        try:
            _, err = child.communicate()
            break
        except KeyboardInterrupt:
            child.send_signal(signal.SIGINT)
        except BaseException:
            child.kill()  # nobody would wait for it
            raise
    lines = err.splitlines()
    error = next((ln[len("kbsim: error: "):] for ln in reversed(lines) if ln.startswith("kbsim: error: ")), None)
    for ln in lines:
        if not ln.startswith("kbsim: error: "):
            print(ln, file=sys.stderr)
    code = child.returncode
    if code < 0:
        raise _BY_CODE[7]("the kbsim process was killed by signal {}".format(-code), 7)
    if code in (0, InterruptedRun.exit_code) or (code == BenchError.exit_code and error
                                                   and error.startswith("POINTS_FAILED")):
        return code
    raise _BY_CODE.get(code, Error)(error or "kbsim ended with exit code {}".format(code), code)

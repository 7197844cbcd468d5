"""kbsim.sweep and kbsim.frame: many points through the run's point runner, and a table of them (docs/python.md)."""

import json
import os
import tempfile

from ._errors import BenchError, Error
from ._run import Result, run


class PointError(Error):
    """A sweep point that failed: ``str(e)`` is its error; ``bench``, ``params`` and ``set`` say which point."""
    exit_code = 6

    def __init__(self, message, bench, params, set):
        super().__init__(message)
        self.bench, self.params, self.set = bench, params, set


PointError.__module__ = "kbsim"


def _point(p):
    """(bench, params, set) from a tuple or a dict."""
    if isinstance(p, dict):
        unknown = sorted(k for k in p if k not in ("bench", "params", "set"))
        if unknown:
            raise TypeError("a sweep point has keys bench, params and set; not {}".format(", ".join(unknown)))
        p = (p.get("bench"), p.get("params"), p.get("set"))
    if not isinstance(p, (tuple, list)) or not 1 <= len(p) <= 3 or not isinstance(p[0], str):
        raise TypeError("a sweep point is (bench, params, set) or a dict of them, bench a str; got {!r}".format(p))
    bench, params, sets = (list(p) + [None, None])[:3]
    for what, value in (("params", params), ("set", sets)):
        if value is not None and not isinstance(value, dict):
            raise TypeError("a sweep point's {} must be a dict, not {}".format(what, type(value).__name__))
    return bench, dict(params or {}), dict(sets or {})


def _scalar(v):
    return "true" if v is True else "false" if v is False else v


def sweep(points, jobs=None, topology=None, plugins=(), set=None, verify_data=False, out=None, quiet=False,
          progress=None):
    """Run independent points, each a bench with its params and set overrides, and return one :class:`Result` per
    point, in the order given, or a :class:`PointError` for a point that failed (the others still run).

    points: a list of ``(bench, params, set)`` tuples (params and set dicts, both optional) or dicts with those keys.
    jobs: worker processes (default: every core); the results do not depend on it. topology, plugins, set (applied
    before each point's own), verify_data, out, quiet, progress: as for :func:`run`; ``out`` keeps points.json.
    """
    parsed = [_point(p) for p in points]
    if not parsed:
        return []
    with tempfile.TemporaryDirectory(prefix="kbsim-sweep-") as tmp:
        listing = os.path.join(tmp, "points.json")  # JSON is YAML: the sweep bench reads it with positions
        with open(listing, "w") as f:
            json.dump({"points": [{"bench": b, "params": {k: _scalar(v) for k, v in p.items()},
                                   "set": {k: _scalar(v) for k, v in s.items()}} for b, p, s in parsed]}, f)
        try:
            result = run("sweep", params={"points": listing}, set=set, topology=topology, plugins=plugins,
                         verify_data=verify_data, out=out, jobs=jobs, quiet=quiet, progress=progress)
        except BenchError as e:  # some points failed: the others' results are there
            if not hasattr(e, "result"):
                raise
            result = e.result
        with open(result.files["points.json"]) as f:
            records = json.load(f)["points"]
    out_list = []
    for (bench, params, sets), rec in zip(parsed, records):
        if not rec["ok"]:
            out_list.append(PointError(rec["error"], bench, params, sets))
            continue
        results = {"bench": bench, "params": rec["config"]["resolved"], "set": rec["config"]["set"],
                   "sim_time_ns": rec["sim_time_ns"], "events": rec["events"], "metrics": rec["metrics"]}
        out_list.append(Result(results, {}, None))
    return out_list


def _flat(prefix, value, row):
    if isinstance(value, dict):
        for k, v in value.items():
            _flat(prefix + "." + k if prefix else k, v, row)
    elif not isinstance(value, list):
        row[prefix] = value


def frame(results):
    """A pandas DataFrame of results (from :func:`sweep` or :func:`run`), one row per point: bench, ok, error,
    each resolved parameter as ``param.NAME``, each override as ``set.PATH``, sim_time_ns, events and every scalar
    metric (nested ones as ``a.b``; lists are left out)."""
    import pandas as pd
    rows = []
    for r in results:
        if isinstance(r, PointError):
            row = {"bench": r.bench, "ok": False, "error": str(r)}
            row.update({"param." + k: v for k, v in r.params.items()})
            row.update({"set." + k: v for k, v in r.set.items()})
        elif isinstance(r, Result):
            row = {"bench": r.results.get("bench"), "ok": True, "error": None}
            row.update({"param." + k: v for k, v in (r.results.get("params") or {}).items()})
            for s in r.results.get("set") or (r.results.get("topology") or {}).get("overrides") or []:
                k, _, v = s.partition("=")
                row["set." + k] = v
            row["sim_time_ns"] = r.results.get("sim_time_ns")
            row["events"] = r.results.get("events")
            _flat("", r.metrics, row)
        else:
            raise TypeError("frame() takes kbsim.Result and kbsim.PointError items, not {}".format(type(r).__name__))
        rows.append(row)
    return pd.DataFrame(rows)

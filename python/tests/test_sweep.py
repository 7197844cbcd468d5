"""kbsim.sweep through the point runner, and kbsim.frame."""

import os

import pytest

import kbsim

POINTS = [
    ("matmul-composite", {"M": 32, "K": 32, "N": 32}),
    {"bench": "matmul-composite", "params": {"M": 64, "K": 32, "N": 32}, "set": {"system.sips.count": 1}},
    ("matmul-composite", {"M": 0}),
    ("pe2pe-latency", {"sizes": "64"}),
]


def test_each_point_is_a_result_or_its_error_in_order_whatever_the_workers():
    two = kbsim.sweep(POINTS, jobs=2)
    one = kbsim.sweep(POINTS, jobs=1)
    assert [type(r) for r in two] == [kbsim.Result, kbsim.Result, kbsim.PointError, kbsim.Result]
    assert [r.metrics for r in two if isinstance(r, kbsim.Result)] == \
        [r.metrics for r in one if isinstance(r, kbsim.Result)]
    assert "parameter 'M' must be in 1..16777216" in str(two[2])
    assert two[2].bench == "matmul-composite" and two[2].params == {"M": 0}
    alone = kbsim.run("matmul-composite", params={"M": 64, "K": 32, "N": 32}, set={"system.sips.count": 1})
    assert two[1].metrics == alone.metrics
    assert two[1].sim_time_ns == alone.sim_time_ns and two[1].events == alone.events


def test_a_frame_has_a_row_per_point_with_params_sets_and_metrics():
    pd = pytest.importorskip("pandas")
    df = kbsim.frame(kbsim.sweep(POINTS[:3], jobs=2))
    assert isinstance(df, pd.DataFrame)
    assert list(df["ok"]) == [True, True, False]
    assert list(df["param.M"]) == [32, 64, 0]
    assert df.loc[1, "set.system.sips.count"] == "1"
    assert df.loc[0, "kernel_window_ns"] > 0 and "stage_busy_ns.gemm" in df.columns
    assert df.loc[2, "error"].startswith("point 3 of 3")


def test_bad_points_are_type_errors():
    for bad in (["matmul-composite"], [(42, {})], [("x", [1])], [{"bench": "x", "parms": {}}]):
        with pytest.raises(TypeError):
            kbsim.sweep(bad)


def test_ctrl_c_stops_a_sweep_and_its_worker_processes(tmp_path):
    # A terminal's Ctrl-C reaches the whole process group: the sweep's forked workers stop their points at the next
    # heartbeat as the interpreter's run does, and InterruptedRun comes back well before the points would end.
    import signal
    import subprocess
    import sys
    import time
    script = tmp_path / "sweep.py"
    script.write_text(
        "import kbsim, sys\n"
        "points = [('message-mesh', {'x': 32, 'y': 32, 'stop_ns': 400000}) for _ in range(4)]\n"
        "try:\n"
        "    kbsim.sweep(points, jobs=2, quiet=True, progress=False)\n"
        "except kbsim.InterruptedRun as e:\n"
        "    print('interrupted', e.result.results['interrupted'])\n"
        "    sys.exit(0)\n"
        "print('finished')\n")
    child = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             start_new_session=True)
    time.sleep(1.5)
    started = time.monotonic()
    os.killpg(child.pid, signal.SIGINT)
    out, err = child.communicate(timeout=120)
    assert child.returncode == 0, err
    assert out.strip() == "interrupted True"
    assert time.monotonic() - started < 20

"""kbsim.Session: the host runtime and the distributed runtime driven from Python, against the C++ benches."""

import json
import os
import signal
import sys
import threading

import numpy as np
import pytest

import kbsim
from conftest import SOURCE

sys.path.insert(0, os.path.join(SOURCE, "examples", "python"))
import flows  # noqa: E402  (the Python drivers of ccl-allreduce and tp-mlp)


@pytest.fixture
def session():
    with kbsim.Session(verify_data=True) as s:
        yield s


@pytest.mark.parametrize("dtype, shape, placement", [
    (np.float16, (64, 96), kbsim.Placement(pe="row", num_pes=4)),
    (np.float32, (32, 64), kbsim.Placement(pe="tiled_row_major", num_pes=4)),
    (np.int32, (8, 16), kbsim.Placement(cube="column", pe="column", num_pes=2, num_cubes=2)),
    (np.uint8, (3, 32), kbsim.Placement()),
    (np.float64, (100,), kbsim.Placement(pe="column", num_pes=4)),
])
def test_a_tensor_goes_to_the_device_and_back_through_numpy(session, dtype, shape, placement):
    rng = np.random.default_rng(7)
    a = (rng.standard_normal(shape) * 50).astype(dtype)
    t = session.runtime.tensor(a, placement, name="a")
    assert t.shape == shape and t.dtype == kbsim._session._DTYPES[np.dtype(dtype).name]
    assert t.nbytes == a.nbytes and sum(s["nbytes"] for s in t.shards) >= a.nbytes
    back = t.numpy()
    assert back.dtype == a.dtype and back.shape == a.shape
    assert np.array_equal(back, a)


def test_a_host_write_takes_the_fabric_time_to_its_acknowledgement(session):
    # 32 KiB to sip0.cube0.pe0 through PCIE_EP, as the C++ runtime's tests time it: 318.4 ns to its HBM slice,
    # 438.4 ns to its TCM (stored and forwarded over pe_data).
    rt = session.runtime
    for space, ns in (("hbm", 318.4), ("tcm", 438.4)):
        t = rt.empty((1, 8192), "f32", kbsim.Placement(space=space))
        r = rt.write(t, np.ones((1, 8192), np.float32))
        assert r["t_done_ns"] - r["t_submit_ns"] == pytest.approx(ns, abs=1e-9)
        assert r["bytes"] == 32768
    assert rt.now_ns > 0 and rt.now_ps == int(round(rt.now_ns * 1000))


def test_a_registered_kernel_runs_by_name_and_its_values_come_back(session):
    rt = session.runtime
    x = rt.tensor(np.arange(16 * 64, dtype=np.float16).reshape(16, 64) / 8, kbsim.Placement(pe="column", num_pes=4))
    z = rt.empty((16, 64), "f16", kbsim.Placement(pe="column", num_pes=4))
    r = rt.launch("host-tour-scale", x, z, 16, 64, 0.5).wait()  # global dims, remapped to each PE's (16, 16)
    assert r["ok"] and r["kernel"] == "host-tour-scale" and len(r["pes"]) == 4
    assert r.elapsed_ns > r["pe_exec_ns"] > 0
    assert np.array_equal(z.numpy(), (np.arange(16 * 64, dtype=np.float16).reshape(16, 64) / 8) * np.float16(0.5))
    assert rt.read_slice(z, 1, 16, 1, 2).tolist() == [[z.numpy()[1, 16], z.numpy()[1, 17]]]


def test_the_allreduce_driver_gives_what_ccl_allreduce_gives(cli, tmp_path):
    sets = {"ccl.defaults.slot_size": 8192}  # what ccl-allreduce's fit_slot raises it to for 4096 elements
    code, _, err = cli("run", "--bench", "ccl-allreduce", "--param", "n_elem=4096", "--verify-data", "--set",
                       "ccl.defaults.slot_size=8192", "--out", str(tmp_path / "cli"))
    assert code == 0, err
    with open(tmp_path / "cli" / "results.json") as f:
        want = json.load(f)
    with kbsim.Session(verify_data=True, set=sets) as s:
        got = flows.ccl_allreduce(s, n_elem=4096)
    r = s.close()
    assert got["critical_path_ns"] == want["metrics"]["crit_ns"]
    assert got["algorithm"] == want["metrics"]["algorithm"]
    assert (r.sim_time_ns, r.events) == (want["sim_time_ns"], want["events"])  # the same run, event for event
    assert len(got["reduced"]) == got["world_size"] == want["metrics"]["ranks"]
    for rank, values in got["reduced"].items():
        assert np.array_equal(values, np.broadcast_to(got["expected"], values.shape).astype(np.float16)), rank


def test_the_tp_mlp_driver_gives_what_tp_mlp_gives(cli, tmp_path):
    code, _, err = cli("run", "--bench", "tp-mlp", "--verify-data", "--out", str(tmp_path / "cli"))
    assert code == 0, err
    with open(tmp_path / "cli" / "results.json") as f:
        want = json.load(f)
    with kbsim.Session(verify_data=True) as s:
        got = flows.tp_mlp(s)
    for key in ("fc1_gemm_ns", "fc2_partial_gemm_ns", "allreduce_crit_ns", "forward_ns", "world_size",
                "allreduce_algorithm"):
        assert got[key] == want["metrics"][key], key
    worst = max(float(np.abs(out - got["expected"]).max()) for out in got["outputs"].values())
    assert worst == want["metrics"]["max_abs_error"]
    assert (s.close().sim_time_ns, s.close().events) == (want["sim_time_ns"], want["events"])


def test_metrics_go_into_the_sessions_results(tmp_path):
    with kbsim.Session(out=tmp_path) as s:
        s.metrics["answer"] = 42
        s.metrics["ratio"] = np.float64(0.5)
        s.runtime.zeros((4, 4), "f16")
    r = s.close()
    assert r.metrics == {"answer": 42, "ratio": 0.5}
    assert r.results["bench"] == "python-session" and r.sim_time_ns > 0
    assert os.path.exists(tmp_path / "results.json")


# --- bad input ---

def test_wrong_python_input_raises_and_leaves_the_session_open(session):
    rt = session.runtime
    t = rt.tensor(np.zeros((4, 8), np.float16))
    with pytest.raises(ValueError, match=r"is \(4, 8\), the array \(8, 4\)"):
        rt.write(t, np.zeros((8, 4)))
    with pytest.raises(TypeError, match="complex128"):
        rt.tensor(np.zeros(4, np.complex128))
    with pytest.raises(ValueError, match="1-D or 2-D"):
        rt.tensor(np.zeros((2, 3, 4), np.float16))
    with pytest.raises(ValueError, match="unknown split 'diagonal'"):
        kbsim.Placement(pe="diagonal")
    with pytest.raises(ValueError, match="unknown dtype 'f12'"):
        rt.empty((4,), "f12")
    with pytest.raises(TypeError, match="kernel argument"):
        rt.launch("host-tour-scale", t, "sixteen")
    with pytest.raises(TypeError, match="kbsim.Tensor"):
        rt.read(np.zeros(4))
    t.free()
    with pytest.raises(ValueError, match="was freed"):
        t.numpy()
    assert t.freed
    assert np.array_equal(rt.tensor(np.ones(3, np.float16)).numpy(), np.ones(3, np.float16))  # still open


def test_a_kbsim_error_in_a_call_ends_the_session_with_the_commands_message():
    s = kbsim.Session()
    with pytest.raises(kbsim.BenchError, match="launch: unknown kernel 'no-such-kernel'") as e:
        s.runtime.launch("no-such-kernel")
    assert e.value.exit_code == 6
    with pytest.raises(kbsim.Error, match="has ended"):
        s.runtime.zeros((4,), "f16")
    assert s.close() is None  # nothing was written: the run failed


def test_a_bad_configuration_fails_the_session_at_its_start():
    with pytest.raises(kbsim.ConfigError, match="nope"):
        kbsim.Session(set={"system.nope": 1})
    with kbsim.Session() as s:  # and the next one opens
        assert s.runtime.zeros((4,), "f16").shape == (4,)


def test_one_run_at_a_time():
    with kbsim.Session():
        with pytest.raises(kbsim.UsageError, match="another kbsim run is under way"):
            kbsim.run("pe-dma-perf")
        with pytest.raises(kbsim.UsageError, match="another kbsim run is under way"):
            kbsim.Session()


def test_a_worker_that_raises_ends_the_spawn_and_its_exception_is_raised(session):
    dist, rt = session.dist, session.runtime
    dist.init_process_group()
    reached = []

    def worker(rank):
        rt.set_device(rank)
        t = rt.tensor(np.ones((1, 64), np.float16))
        if rank == 1:
            raise ZeroDivisionError("rank 1 divided by zero")
        dist.barrier()  # rank 0 waits here for rank 1, which never comes
        reached.append(t)

    with pytest.raises(ZeroDivisionError, match="rank 1 divided by zero") as e:
        dist.spawn(worker, dist.get_world_size())
    assert "in kbsim spawn worker 1" in e.value.__notes__[0]
    assert reached == []
    with pytest.raises(kbsim.Error, match="has ended"):
        rt.zeros((4,), "f16")


def test_spawn_checks_its_arguments(session):
    with pytest.raises(TypeError):
        session.dist.spawn(42, 2)
    with pytest.raises(ValueError):
        session.dist.spawn(lambda r: None, 0)
    with pytest.raises(TypeError):  # refused before anything is handed over: the session goes on
        session.dist.spawn(lambda r: None, 2**33)
    session.dist.init_process_group()
    seen = []

    def worker(rank):
        seen.append((rank, session.dist.get_rank()))
        session.runtime.zeros((4,), "f16")
        with pytest.raises(RuntimeError, match="workers cannot spawn workers"):
            session.dist.spawn(lambda r: None, 1)

    session.dist.spawn(worker, 3)
    assert seen == [(0, 0), (1, 1), (2, 2)]


def test_ctrl_c_in_a_long_call_ends_the_session_keeping_its_results():
    # A 32 MiB host write runs for seconds: a SIGINT half a second in stops it at the next heartbeat, and the
    # session ends as an interrupted run does, its results so far written.
    s = kbsim.Session()
    data = np.zeros((4096, 4096), np.float16)
    timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    with pytest.raises(kbsim.InterruptedRun, match="interrupted at sim time") as e:
        s.runtime.tensor(data, kbsim.Placement(pe="row", num_pes=0, num_cubes=0))
    timer.join()
    assert isinstance(e.value, KeyboardInterrupt)
    assert e.value.result.results["interrupted"] is True and e.value.result.sim_time_ns > 0
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    with pytest.raises(kbsim.Error, match="has ended"):
        s.runtime.zeros((4,), "f16")


def test_the_example_notebook_is_committed_without_outputs():
    with open(os.path.join(SOURCE, "examples", "python", "tour.ipynb")) as f:
        nb = json.load(f)
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert code and all(not c["outputs"] and c["execution_count"] is None for c in code)


def test_a_spawn_left_part_way_ends_the_session_cleanly():
    # The scheduler itself fails (a worker switches out of its greenlet by hand): the spawn is unwound on the
    # session's side too, the session ends, and the next one opens.
    import greenlet
    s = kbsim.Session()
    s.dist.init_process_group()

    def worker(rank):
        s.runtime.set_device(rank)
        s.runtime.zeros((1, 64), "f16")
        if rank == 1:
            greenlet.getcurrent().parent.switch("not a call")
        s.dist.barrier()

    with pytest.raises(RuntimeError, match="switched out of its greenlet"):
        s.dist.spawn(worker, 2)
    with pytest.raises(kbsim.UsageError, match="has ended"):
        s.runtime.zeros((4,), "f16")
    with kbsim.Session() as again:
        assert again.runtime.zeros((4,), "f16").shape == (4,)


def test_ctrl_c_in_a_spawn_ends_the_session_keeping_its_results():
    s = kbsim.Session()
    s.dist.init_process_group()

    def worker(rank):
        s.runtime.set_device(rank)
        for _ in range(50):
            s.runtime.tensor(np.zeros((256, 4096), np.float16), kbsim.Placement(pe="row", num_pes=0, num_cubes=0))

    timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    with pytest.raises(kbsim.InterruptedRun) as e:
        s.dist.spawn(worker, 2)
    timer.join()
    assert e.value.result.results["interrupted"] is True
    with kbsim.Session() as again:
        assert again.runtime.zeros((4,), "f16").shape == (4,)


def test_a_signal_handlers_exception_stops_the_call_and_is_raised():
    # A SIGALRM handler raises during a long call: the run is stopped as Ctrl-C stops it, the handler's exception is
    # raised once the session has ended, close() has nothing left to do, and the next session opens.
    def alarm(*_):
        raise TimeoutError("too slow")

    old = signal.signal(signal.SIGALRM, alarm)
    try:
        s = kbsim.Session()
        signal.setitimer(signal.ITIMER_REAL, 0.4)
        with pytest.raises(TimeoutError, match="too slow"):
            s.runtime.tensor(np.zeros((4096, 4096), np.float16), kbsim.Placement(pe="row", num_pes=0, num_cubes=0))
        assert s.close() is None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    with kbsim.Session() as again:
        assert again.runtime.zeros((4,), "f16").shape == (4,)

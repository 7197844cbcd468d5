"""CCL algorithms written in Python (sdk/README.md, "Write it in Python"): the twin py_ring_allreduce against the
C++ ring_allreduce on the 2-SIP and 6-SIP torus, an algorithm's own parameters, and its errors."""

import json
import os
import re

import pytest

from conftest import SOURCE, needs_mpirun
from test_plugins import plugin_dir

EXAMPLES = os.path.join(SOURCE, "examples", "python_plugins")
TORUS = {
    2: ["--set", "system.sips.count=2", "--set", "system.sips.topology=torus_2d", "--set", "system.sips.w=2",
        "--set", "system.sips.h=1"],
    6: ["--set", "system.sips.count=6", "--set", "system.sips.topology=torus_2d", "--set", "system.sips.w=3",
        "--set", "system.sips.h=2"],
}


def allreduce(cli, tmp_path, algorithm, *extra, plugins=EXAMPLES):
    out = tmp_path / algorithm
    code, stdout, err = cli("run", "--bench", "ccl-allreduce", "--plugins", plugins, "--set",
                            "ccl.algorithm=" + algorithm, "--op-log", str(out) + ".ops", "--out", str(out), *extra)
    results = None
    if code == 0:
        with open(out / "results.json") as f:
            results = json.load(f)
    return code, stdout, err, results


@pytest.mark.parametrize("sips", [2, 6])
def test_py_ring_allreduce_gives_ring_allreduces_times_values_and_op_log(cli, tmp_path, sips):
    runs = {}
    for algorithm in ("ring_allreduce", "py_ring_allreduce"):
        code, out, err, res = allreduce(cli, tmp_path, algorithm, "--param", "n_elem=4096", "--verify-data",
                                        *TORUS[sips])
        assert code == 0, err
        assert "verified: every rank holds the sum of all {} ranks' shards".format(sips) in out
        runs[algorithm] = res
    cpp, py = runs["ring_allreduce"], runs["py_ring_allreduce"]
    assert py["ccl"]["algorithm"] == "py_ring_allreduce"
    assert py["metrics"]["crit_ns"] == cpp["metrics"]["crit_ns"]
    assert py["metrics"]["crit_ns"] == {2: 9307.1, 6: 27150.436}[sips]
    assert py["sim_time_ns"] == cpp["sim_time_ns"] and py["events"] == cpp["events"]
    assert (tmp_path / "py_ring_allreduce.ops").read_bytes() == (tmp_path / "ring_allreduce.ops").read_bytes()


TINY = """
    import kbsim

    @kbsim.algorithm("py_pair", "pe0 of cube 0 of every rank, in a ring", params=[kbsim.Param("hops", 1, "ring stride")],
                     sip_topologies=["ring_1d", "torus_2d"])
    class Pair:
        def wiring(self, setup):
            w, k = setup.world_size, setup.params["hops"]
            {wiring}
        def launch(self, c):
            {launch}
    """
RING = ("return [kbsim.Wire(kbsim.Pe(r, 0, 0), 'next', kbsim.Pe((r + k) % w, 0, 0)) for r in range(w)] + "
        "[kbsim.Wire(kbsim.Pe(r, 0, 0), 'prev', kbsim.Pe((r - k) % w, 0, 0)) for r in range(w)]")
LAUNCH = "return kbsim.Launch('ring-allreduce', 1, 1, [1, 1, c.setup.params['slot_size']])"


def tiny(tmp_path, wiring=RING, launch=LAUNCH):
    return plugin_dir(tmp_path, pair=TINY.format(wiring=wiring, launch=launch))


def test_an_algorithms_own_parameters_are_listed_set_and_checked(cli, tmp_path):
    d = tiny(tmp_path)
    code, out, err = cli("info", "py_pair", "--plugins", d)
    assert code == 0, err
    assert "sip topologies: ring_1d, torus_2d" in out and "hops" in out and "ring stride" in out
    # A C++ kernel launched by a Python algorithm; its stride from --set.
    times = {}
    for hops in (1, 2):
        code, out, err, res = allreduce(cli, tmp_path, "py_pair", "--param", "n_elem=256", "--set",
                                        "ccl.py_pair.hops={}".format(hops), "--set", "system.sips.count=4",
                                        plugins=d)
        assert code == 0, err
        times[hops] = res["metrics"]["crit_ns"]
    assert times[1] != times[2]
    code, _, err, _ = allreduce(cli, tmp_path, "py_pair", "--set", "ccl.py_pair.hops=two", plugins=d)
    assert code == 3 and "hops" in err, err
    code, _, err, _ = allreduce(cli, tmp_path, "py_pair", "--set", "system.sips.topology=mesh_2d_no_wrap",
                                "--set", "system.sips.count=4", "--set", "system.sips.w=2", "--set", "system.sips.h=2",
                                plugins=d)
    assert code == 3 and "does not support SIP topology mesh_2d_no_wrap" in err, err


def test_an_exception_in_an_algorithm_is_one_line_naming_its_line_the_rank_and_the_time(cli, tmp_path):
    d = tiny(tmp_path, launch="return 1 // (c.rank - c.rank)")
    code, _, err, _ = allreduce(cli, tmp_path, "py_pair", "--set", "system.sips.count=2", plugins=d)
    assert code == 4, err
    line = err.strip()
    assert "\n" not in line
    assert re.search(r"CCL algorithm py_pair failed in its launch \(rank \d, sim time \d+ ns\): ", line)
    assert "pair.py:11 in launch: ZeroDivisionError: integer division or modulo by zero" in line


def test_a_wiring_of_the_wrong_shape_is_named(cli, tmp_path):
    d = tiny(tmp_path, wiring="return [(0, 0, 'next')]")
    code, _, err, _ = allreduce(cli, tmp_path, "py_pair", "--set", "system.sips.count=2", plugins=d)
    assert code == 4, err
    assert "pair.py: Pair.wiring returned [(0, 0, 'next')]; it must return a list of kbsim.Wire(src, dir, dst)" in err


def test_a_kbsim_error_an_algorithm_raises_keeps_its_exit_code(cli, tmp_path):
    d = tiny(tmp_path, launch="raise kbsim.BenchError('py_pair: needs a shard per cube')")
    code, _, err, _ = allreduce(cli, tmp_path, "py_pair", "--set", "system.sips.count=2", plugins=d)
    assert code == 6, err
    assert "py_pair: needs a shard per cube" in err


def test_a_python_bench_runs_a_python_algorithm_from_its_spawned_ranks(cli, tmp_path):
    # py-tp-mlp's ranks are Python functions on spawn workers: the algorithm's launch runs from their fibers.
    metrics = {}
    for bench, algorithm in (("tp-mlp", "ring_allreduce"), ("py-tp-mlp", "py_ring_allreduce")):
        code, _, err = cli("run", "--bench", bench, "--plugins", EXAMPLES, "--set", "ccl.algorithm=" + algorithm,
                           "--verify-data", "--out", str(tmp_path / bench))
        assert code == 0, err
        with open(tmp_path / bench / "results.json") as f:
            metrics[bench] = json.load(f)["metrics"]
    assert metrics["py-tp-mlp"]["allreduce_algorithm"] == "py_ring_allreduce"
    for key in ("allreduce_crit_ns", "forward_ns", "max_abs_error"):
        assert metrics["py-tp-mlp"][key] == metrics["tp-mlp"][key]


STUCK = """
    import kbsim

    @kbsim.algorithm("py_stuck_ring", "one pass around a ring of cube 0's pe0, received from the wrong side",
                     sip_topologies=["ring_1d"])
    class StuckRing:
        def wiring(self, setup):
            return [kbsim.Wire(kbsim.Pe(r, 0, 0), d, kbsim.Pe(peer, 0, 0)) for r in range(setup.world_size)
                    for d, peer in setup.system.sip_neighbors(setup.world_size, r).items()]

        def launch(self, c):
            return kbsim.Launch("py-stuck-ring")

    @kbsim.kernel("py-stuck-ring", "sends east, then receives from the east: nobody ever sends there")
    def stuck(tl, t, rank, world, n):
        if tl.program_id(1) != 0 or tl.program_id(0) != 0:
            return
        shard = t.shard(0, 0)
        acc = tl.load(shard["ptr"], [n])
        tl.send("global_E", acc)
        acc = acc + tl.recv("global_E", [n])
        tl.store(shard["ptr"], acc)
    """


def test_a_python_kernel_that_blocks_forever_gets_the_stuck_run_report(cli, tmp_path):
    # The C++ stuck_ring's wrong_direction case (tests/cli/ccl_test.cpp), all in Python: the same report.
    d = plugin_dir(tmp_path, stuck=STUCK)
    code, _, err, _ = allreduce(cli, tmp_path, "py_stuck_ring", "--param", "n_elem=8", plugins=d)
    assert code == 5, err
    assert err.count("\n") == 1
    assert "simulation stuck (at t=" in err
    assert ("sip0.cube0.pe0 (kernel 'py-stuck-ring') waits in tl.recv(global_E, (8,), f16) from sip1.cube0.pe0 "
            "since t=") in err
    assert "sip1.cube0.pe0.pe_ipcq: holds 1 message(s) from sip0.cube0.pe0 in global_W that no recv took" in err


@needs_mpirun
def test_a_split_run_of_a_python_algorithm_and_kernel_gives_the_same_times(cli, mpirun_cli, tmp_path):
    code, _, err, whole = allreduce(cli, tmp_path, "py_ring_allreduce", "--param", "n_elem=4096", "--verify-data",
                                    *TORUS[2])
    assert code == 0, err
    code, out, err = mpirun_cli(2, "run", "--bench", "ccl-allreduce", "--plugins", EXAMPLES, "--set",
                                "ccl.algorithm=py_ring_allreduce", "--param", "n_elem=4096", "--verify-data",
                                *TORUS[2], "--out", str(tmp_path / "split"))
    assert code == 0, err
    assert "split      2 ranks" in out and "verified: every rank holds the sum" in out
    with open(tmp_path / "split" / "results.json") as f:
        split = json.load(f)
    assert split["metrics"]["crit_ns"] == whole["metrics"]["crit_ns"]
    assert split["sim_time_ns"] == whole["sim_time_ns"] and split["events"] == whole["events"]

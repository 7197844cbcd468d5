"""Plugins written in Python (sdk/README.md, "Write it in Python"): *.py files in a plugin directory, run by
the kbsim command's embedded interpreter. The twin py-tp-mlp against the C++ tp-mlp, listing, errors, the index."""

import json
import os
import shutil
import textwrap

import pytest

import kbsim
from conftest import SOURCE, needs_mpirun

EXAMPLES = os.path.join(SOURCE, "examples", "python_plugins")
TWIN_KEYS = ("world_size", "fc1_gemm_ns", "fc2_partial_gemm_ns", "allreduce_crit_ns", "forward_ns",
             "allreduce_algorithm", "max_abs_error")


def results(folder):
    with open(os.path.join(folder, "results.json")) as f:
        return json.load(f)


def plugin_dir(tmp_path, **files):
    """A plugin directory holding ``files`` (name without .py -> source)."""
    d = tmp_path / "plugins"
    d.mkdir(exist_ok=True)
    for name, text in files.items():
        (d / (name + ".py")).write_text(textwrap.dedent(text))
    return str(d)


def test_the_python_twin_gives_tp_mlps_times_values_and_op_log(cli, tmp_path):
    for bench, extra in (("tp-mlp", []), ("py-tp-mlp", ["--plugins", EXAMPLES])):
        out = tmp_path / bench
        code, _, err = cli("run", "--bench", bench, *extra, "--verify-data", "--op-log", str(tmp_path / (bench + ".ops")),
                           "--out", str(out))
        assert code == 0, err
    cpp, py = results(tmp_path / "tp-mlp"), results(tmp_path / "py-tp-mlp")
    assert {k: py["metrics"][k] for k in TWIN_KEYS} == {k: cpp["metrics"][k] for k in TWIN_KEYS}
    assert py["metrics"]["forward_ns"] == 4018.454
    assert py["sim_time_ns"] == cpp["sim_time_ns"] and py["events"] == cpp["events"]
    assert (tmp_path / "py-tp-mlp.ops").read_bytes() == (tmp_path / "tp-mlp.ops").read_bytes()


def test_list_and_info_show_a_python_bench_with_its_file_and_parameters(cli):
    code, out, err = cli("list", "benches", "--plugins", EXAMPLES)
    assert code == 0, err
    assert "py-tp-mlp" in out and "tp-mlp in Python" in out
    code, out, err = cli("info", "py-tp-mlp", "--plugins", EXAMPLES)
    assert code == 0, err
    assert "library: tp_mlp.py ({})".format(os.path.join(os.path.realpath(EXAMPLES), "tp_mlp.py")) in out
    assert "D_hidden" in out and "2048" in out and "hidden features" in out


def test_parameters_are_checked_as_a_cpp_benchs(cli, tmp_path):
    code, _, err = cli("run", "--bench", "py-tp-mlp", "--plugins", EXAMPLES, "--param", "D_hidden=many")
    assert code == 3, err
    assert "D_hidden" in err
    code, _, err = cli("run", "--bench", "py-tp-mlp", "--plugins", EXAMPLES, "--param", "D_hiden=4")
    assert code == 3 and "D_hiden" in err, err


def test_an_exception_in_a_bench_is_one_line_naming_file_line_function_and_sim_time(cli, tmp_path):
    d = plugin_dir(tmp_path, faulty="""\
        import numpy as np
        import kbsim

        @kbsim.bench("py-faulty", "raises after a tensor")
        def faulty(ctx):
            ctx.runtime.zeros((64, 64))
            raise ValueError("no good")
        """)
    code, _, err = cli("run", "--bench", "py-faulty", "--plugins", d)
    assert code == 4, err
    lines = [ln for ln in err.splitlines() if ln.startswith("kbsim: error:")]
    assert len(lines) == 1, err
    assert "faulty.py:7 in faulty: ValueError: no good (at sim time " in lines[0]
    assert "bench 'py-faulty' (library faulty.py) failed" in lines[0]


def test_a_kbsim_error_a_bench_raises_keeps_its_exit_code(cli, tmp_path):
    d = plugin_dir(tmp_path, checks="""\
        import kbsim

        @kbsim.bench("py-checks", "fails its own check")
        def checks(ctx):
            raise kbsim.BenchError("the values are off")
        """)
    code, _, err = cli("run", "--bench", "py-checks", "--plugins", d)
    assert code == 6, err
    assert "checks.py:5 in checks: the values are off" in err


def test_a_syntax_error_is_named_at_discovery_and_list_still_shows_the_rest(cli, tmp_path):
    d = plugin_dir(tmp_path, good="""\
        import kbsim

        @kbsim.bench("py-good", "is fine")
        def good(ctx):
            pass
        """, bad="""\
        import kbsim

        def broken(:
            pass
        """)
    code, _, err = cli("run", "--bench", "pe-dma-perf", "--plugins", d)
    assert code == 4
    assert "bad.py:3:12: SyntaxError:" in err, err
    code, out, err = cli("list", "benches", "--plugins", d)
    assert code == 4
    assert "py-good" in out and "pe-dma-perf" in out
    assert err.count("kbsim: error:") == 1 and "bad.py:3:12: SyntaxError:" in err


def test_an_import_error_names_the_file_and_line(cli, tmp_path):
    d = plugin_dir(tmp_path, needs="""\
        import kbsim
        import no_such_module_here
        """)
    code, _, err = cli("list", "benches", "--plugins", d)
    assert code == 4
    assert "needs.py:2 in <module>: ModuleNotFoundError: No module named 'no_such_module_here'" in err, err


def test_a_name_that_clashes_with_a_builtin_is_refused(cli, tmp_path):
    d = plugin_dir(tmp_path, clash="""\
        import kbsim

        @kbsim.bench("tp-mlp", "takes a builtin's name")
        def clash(ctx):
            pass
        """)
    code, _, err = cli("run", "--bench", "py-tp-mlp", "--plugins", d)
    assert code == 4
    assert "clash.py: bench 'tp-mlp' is already provided by" in err and "libkbsim_tensor_parallel.so" in err, err


def test_with_an_index_a_run_that_uses_no_python_plugin_starts_no_interpreter(cli, tmp_path):
    d = shutil.copytree(EXAMPLES, tmp_path / "copy")
    code, _, err = cli("list", "--write-index", str(d))
    assert code == 0, err
    code, _, err = cli("run", "--bench", "pe-dma-perf", "--plugins", str(d), "--log-level", "debug",
                       "--out", str(tmp_path / "a"))
    assert code == 0, err
    assert "tp_mlp.py" not in err and "python_plugins" not in err
    code, _, err = cli("run", "--bench", "py-tp-mlp", "--plugins", str(d), "--log-level", "debug",
                       "--out", str(tmp_path / "b"))
    assert code == 0, err
    assert "loading plugin {} on first use".format(os.path.join(str(d), "tp_mlp.py")) in err


def test_a_python_bench_sweeps_points_in_worker_processes(cli, tmp_path):
    d = plugin_dir(tmp_path, sweep="""\
        import kbsim

        @kbsim.bench("py-sweep", "the pe-dma-perf points and py-tp-mlp's, with run_points",
                     params=[kbsim.Param("label", "s", "a label")])
        def sweep(ctx):
            got = ctx.run_points([("tp-mlp", {"D_hidden": 1024}), ("py-tp-mlp", {"D_hidden": 1024}),
                                  ("tp-mlp", {"D_hidden": 7})])
            ctx.metrics["forward_ns"] = [g["forward_ns"] if isinstance(g, dict) else str(g) for g in got]
            ctx.metrics["label"] = ctx.params["label"]
            ctx.write_file("points.csv", "forward_ns\\n" + "\\n".join(map(str, ctx.metrics["forward_ns"])))
        """)
    shutil.copy(os.path.join(EXAMPLES, "tp_mlp.py"), d)
    outs = []
    for jobs in ("1", "2"):
        out = tmp_path / ("j" + jobs)
        code, _, err = cli("run", "--bench", "py-sweep", "--plugins", d, "-j", jobs, "--out", str(out))
        assert code == 6 and "POINTS_FAILED: 1 of 3 points" in err, err  # the point that fails, as a C++ sweep's
        outs.append(results(out)["metrics"])
        assert (out / "points.csv").exists()
    assert outs[0] == outs[1]
    forward = outs[0]["forward_ns"]
    assert forward[0] == forward[1] and isinstance(forward[0], float)
    assert "D_hidden" in forward[2]


def test_from_python_a_run_with_python_plugins_runs_as_a_kbsim_process(tmp_path):
    r = kbsim.run("py-tp-mlp", plugins=[EXAMPLES], verify_data=True, quiet=True)
    assert r.metrics["forward_ns"] == 4018.454 and r.metrics["max_abs_error"] < 0.1


def test_inside_a_python_bench_kbsim_run_says_it_cannot(cli, tmp_path):
    d = plugin_dir(tmp_path, nested="""\
        import kbsim

        @kbsim.bench("py-nested", "runs a run")
        def nested(ctx):
            kbsim.run("pe-dma-perf")
        """)
    code, _, err = cli("run", "--bench", "py-nested", "--plugins", d)
    assert code == 2, err
    assert "nested.py:5 in nested: a Python plugin runs inside a kbsim run" in err


def test_a_session_in_this_interpreter_refuses_python_plugins_and_the_next_run_is_fine():
    with pytest.raises(kbsim.PluginError, match="Python plugins run in a kbsim process, not in this interpreter"):
        kbsim.Session(plugins=[EXAMPLES])
    assert kbsim.run("pe-dma-perf", quiet=True).metrics


@needs_mpirun
def test_under_mpirun_a_python_bench_shares_its_points_over_the_ranks(cli, mpirun_cli, tmp_path):
    d = plugin_dir(tmp_path, sweep="""\
        import kbsim

        @kbsim.bench("py-mpi-sweep", "tp-mlp points")
        def sweep(ctx):
            got = ctx.run_points([("tp-mlp", {"D_hidden": 1024}), ("tp-mlp", {"D_hidden": 2048})])
            ctx.metrics["forward_ns"] = [g["forward_ns"] for g in got]
        """)
    code, _, err = cli("run", "--bench", "py-mpi-sweep", "--plugins", d, "--out", str(tmp_path / "one"))
    assert code == 0, err
    code, out, err = mpirun_cli(2, "run", "--bench", "py-mpi-sweep", "--plugins", d, "--out", str(tmp_path / "two"))
    assert code == 0, err
    assert "2 run over 2 MPI ranks" in out
    assert results(tmp_path / "two")["metrics"] == results(tmp_path / "one")["metrics"]


def test_a_bench_stopped_by_max_wall_keeps_its_metrics(cli, tmp_path):
    d = plugin_dir(tmp_path, long="""\
        import numpy as np
        import kbsim

        @kbsim.bench("py-long", "many kernel launches")
        def long(ctx):
            rt = ctx.runtime
            x = rt.tensor(np.ones((16, 64), np.float16), kbsim.Placement(pe="column", num_pes=4))
            z = rt.empty((16, 64), "f16", kbsim.Placement(pe="column", num_pes=4))
            ctx.metrics["launches"] = 0
            for _ in range(1000000):
                rt.launch("host-tour-scale", x, z, 16, 64, 0.5).wait()
                ctx.metrics["launches"] += 1
        """)
    code, _, err = cli("run", "--bench", "py-long", "--plugins", d, "--max-wall", "0.5", "--out", str(tmp_path / "o"))
    assert code == 8, err
    r = results(tmp_path / "o")
    assert r["interrupted"] and 0 < r["metrics"]["launches"] < 1000000


def test_a_metric_of_another_type_ends_the_run_naming_its_key(cli, tmp_path):
    d = plugin_dir(tmp_path, badmetric="""\
        import kbsim

        @kbsim.bench("py-bad-metric", "a metric that is not one")
        def bad(ctx):
            ctx.metrics["fine"] = {"list": [1, 2.5, "x"]}
            ctx.metrics["nested"] = {"set": {1, 2}}
        """)
    code, _, err = cli("run", "--bench", "py-bad-metric", "--plugins", d)
    assert code == 4, err
    assert "metric 'nested.set'" in err and err.count("\\n") <= 1, err


@pytest.mark.parametrize("size", [128, 512])
def test_the_python_gemm_kernel_and_bench_give_matmul_composites_times_op_log_and_values(cli, tmp_path, size):
    dims = ["--param", "M={}".format(size), "--param", "K={}".format(size), "--param", "N={}".format(size)]
    for bench, extra in (("matmul-composite", []), ("py-matmul-composite", ["--plugins", EXAMPLES])):
        code, _, err = cli("run", "--bench", bench, *extra, *dims, "--verify-data",
                           "--op-log", str(tmp_path / (bench + ".ops")), "--out", str(tmp_path / bench))
        assert code == 0, err
    cpp, py = results(tmp_path / "matmul-composite"), results(tmp_path / "py-matmul-composite")
    assert py["metrics"] == cpp["metrics"]
    assert py["sim_time_ns"] == cpp["sim_time_ns"] and py["events"] == cpp["events"]
    assert (tmp_path / "py-matmul-composite.ops").read_bytes() == (tmp_path / "matmul-composite.ops").read_bytes()


def test_an_exception_in_a_kernel_names_file_line_function_pe_and_sim_time(cli, tmp_path):
    d = plugin_dir(tmp_path, badkernel="""\
        import kbsim

        @kbsim.kernel("py_bad_kernel", "loads, then raises")
        def bad_kernel(tl, a):
            x = tl.load(a.ptr, a.shape, a.dtype)
            raise ValueError("no good after {}".format(x.shape))

        @kbsim.bench("py-bad-kernel", "launches a kernel that raises")
        def bench(ctx):
            a = ctx.runtime.zeros((16, 16))
            ctx.runtime.launch("py_bad_kernel", a).wait()
        """)
    code, _, err = cli("run", "--bench", "py-bad-kernel", "--plugins", d)
    lines = [ln for ln in err.splitlines() if ln.startswith("kbsim: error:")]
    assert code == 5 and len(lines) == 1, err
    assert "badkernel.py:6 in bad_kernel: ValueError: no good after (16, 16)" in lines[0]
    assert "pe_cpu" in lines[0] and " ns" in lines[0]


def test_python_kernels_run_while_spawn_workers_move_data(cli, tmp_path):
    # A write in a spawn worker runs the simulation on that worker's own stack: the kernels' Python steps still run
    # on the thread's Python stack, and each kernel takes exactly its cycles.
    d = plugin_dir(tmp_path, spin="""\
        import numpy as np
        import kbsim

        @kbsim.kernel("py_spin", "n steps of 10 cycles")
        def spin(tl, n):
            for _ in range(n):
                tl.cycles(10)

        @kbsim.bench("py-spawn-kernels", "kernels in flight while the workers write tensors")
        def bench(ctx):
            rt, dist = ctx.runtime, ctx.dist
            dist.init_process_group()
            took = {}

            def worker(rank):
                rt.set_device(rank)
                launch = rt.launch("py_spin", 200)
                t = rt.zeros((256, 256))
                rt.write(t, np.ones((256, 256), np.float16))
                took[rank] = launch.wait()["pe_exec_ns"]

            dist.spawn(worker, dist.get_world_size())
            ctx.metrics["pe_exec_ns"] = [took[r] for r in sorted(took)]
        """)
    code, _, err = cli("run", "--bench", "py-spawn-kernels", "--plugins", d, "--out", str(tmp_path / "o"))
    assert code == 0, err
    assert results(tmp_path / "o")["metrics"]["pe_exec_ns"] == [2000.0, 2000.0]

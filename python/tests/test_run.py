"""kbsim.run against the kbsim command: the same results.json, the same errors, exit codes as exceptions."""

import json
import os
import signal
import threading
import time

import pytest

import kbsim
from conftest import BUILD

HOST_KEYS = ("wall_time_s", "events_per_s", "host", "abi_version")


def without_host(results):
    return {k: v for k, v in results.items() if k not in HOST_KEYS}


def test_a_run_gives_what_the_command_writes(cli, tmp_path):
    code, _, err = cli("run", "--bench", "pe-dma-perf", "--out", str(tmp_path / "cli"))
    assert code == 0, err
    with open(tmp_path / "cli" / "results.json") as f:
        expected = json.load(f)
    r = kbsim.run("pe-dma-perf", out=tmp_path / "py")
    assert without_host(r.results) == without_host(expected)
    assert r.metrics == expected["metrics"]
    assert r.sim_time_ns == expected["sim_time_ns"] and r.events == expected["events"]
    assert "pe_dma_utilization.svg" in r.files and os.path.exists(r.files["pe_dma_utilization.svg"])


def test_params_sets_and_flags_reach_the_run():
    r = kbsim.run("matmul-composite", params={"M": 64, "K": 64, "N": 64}, set={"system.sips.count": 1},
                  verify_data=True)
    assert r.metrics["M"] == 64
    assert "data_pass" in r.results  # --verify-data ran the data pass
    assert r.results["topology"]["overrides"] == ["system.sips.count=1"]


def test_without_out_the_files_live_as_long_as_the_result():
    r = kbsim.run("pe-dma-perf")
    svg = r.files["pe_dma_utilization.svg"]
    with open(svg) as f:
        assert "<svg" in f.read()
    folder = r.out
    del r
    assert not os.path.exists(folder)


@pytest.mark.parametrize("kwargs, error, code, text", [
    (dict(bench="no-such-bench"), kbsim.UsageError, 2, "no-such-bench"),
    (dict(bench="pe-dma-perf", params={"nope": 1}), kbsim.ConfigError, 3, "unknown parameter 'nope'"),
    (dict(bench="pe-dma-perf", flags={"no-such-flag": True}), kbsim.UsageError, 2, "no-such-flag"),
    (dict(bench="system", set={"system.nope": 1}), kbsim.ConfigError, 3, "nope"),
    (dict(bench="va-offset-verify", params={"remap": False}), kbsim.SimulationError, 5, "computed its piece at VA"),
])
def test_errors_are_exceptions_with_the_commands_message_and_code(cli, kwargs, error, code, text):
    with pytest.raises(error) as e:
        kbsim.run(**kwargs)
    assert e.value.exit_code == code
    assert text in str(e.value)
    assert isinstance(e.value, kbsim.Error)


def test_the_same_message_as_the_command_line(cli):
    code, _, err = cli("run", "--bench", "pe-dma-perf", "--param", "nope=1")
    with pytest.raises(kbsim.Error) as e:
        kbsim.run("pe-dma-perf", params={"nope": 1})
    assert code == e.value.exit_code
    assert err.strip() == "kbsim: error: " + str(e.value)


def test_a_bench_must_be_named_by_a_string():
    with pytest.raises(TypeError):
        kbsim.run(42)


def test_a_faulty_plugin_is_a_plugin_error_naming_the_library():
    bad = os.path.join(BUILD, "tests", "plugins", "bad_undefined")
    with pytest.raises(kbsim.PluginError) as e:
        kbsim.run("pe-dma-perf", plugins=[bad])
    assert e.value.exit_code == 4
    assert "libtest_bad_undefined.so" in str(e.value) and "kbsim_test_nowhere_defined" in str(e.value)


def test_ctrl_c_stops_the_run_keeps_its_results_and_raises():
    # A SIGINT to this process a little after the run starts: the run's own handler stops it at the next heartbeat
    # (Python's handler is back afterwards), the results so far are written, and InterruptedRun is raised.
    timer = threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    started = time.monotonic()
    with pytest.raises(kbsim.InterruptedRun) as e:
        kbsim.run("message-mesh", params={"x": 32, "y": 32, "stop_ns": 10_000_000})
    timer.join()
    assert time.monotonic() - started < 30
    assert isinstance(e.value, KeyboardInterrupt)
    assert e.value.result.results["interrupted"] is True
    assert 0 < e.value.result.sim_time_ns < 10_000_000
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_isolated_a_crashing_plugin_is_one_line_and_the_interpreter_lives_on(cli, tmp_path):
    # test.thrower raises SIGSEGV from its timer: the command reports the component and exits 7; isolated, so does
    # kbsim.run, and this process goes on.
    (tmp_path / "c.yaml").write_text("components:\n  test.thrower: { library: test_thrower, type: thrower }\n")
    (tmp_path / "t.yaml").write_text("nodes:\n  - { id: bomb, impl: test.thrower, params: { what: segv } }\n")
    plugins = [os.path.join(BUILD, "tests", "plugins", "thrower")]
    flags = {"components": str(tmp_path / "c.yaml")}
    code, _, err = cli("run", "--bench", "traffic", "--plugins", plugins[0], "--components", str(tmp_path / "c.yaml"),
                       "--topology", str(tmp_path / "t.yaml"), "--out", str(tmp_path / "cli"))
    assert code == 7
    with pytest.raises(kbsim.SimulationError) as e:
        kbsim.run("traffic", topology=tmp_path / "t.yaml", plugins=plugins, flags=flags, isolate=True, quiet=True)
    assert e.value.exit_code == 7
    assert "kbsim: error: " + str(e.value) == err.strip().splitlines()[-1]
    assert "bomb" in str(e.value)
    assert kbsim.run("pe-dma-perf", isolate=True, quiet=True).metrics == kbsim.run("pe-dma-perf", quiet=True).metrics


def test_the_readmes_python_example_runs():
    # The README's "From Python" example, as a new user pastes it.
    from conftest import SOURCE
    with open(os.path.join(SOURCE, "README.md")) as f:
        readme = f.read()
    section = readme[readme.index("## From Python"):]
    code = section[section.index("```python\n") + len("```python\n"):section.index("```\n", section.index("```python"))]
    assert "kbsim.Session" in code
    exec(compile(code, "README.md", "exec"), {})

"""Hardware blocks written in Python (sdk/README.md, "Write it in Python"): the twin py.pinger against the SDK
guide's C++ pinger, the harness from pytest, errors, and a split run."""

import json
import os
import re
import sys

import pytest

import kbsim
import kbsim.testing
from conftest import BUILD, SOURCE, needs_mpirun
from test_plugins import plugin_dir

EXAMPLES = os.path.join(SOURCE, "examples", "python_plugins")
sys.path.insert(0, EXAMPLES)
import pinger  # noqa: E402  (the plugin file, as a module)

CPP_PINGER = os.path.join(BUILD, "tests", "plugins", "pinger")


def pingers(tmp_path, impl, **params):
    """The guide's two pingers with ``impl``, a pinging b across a wire of 1 ns (b's params ``params``)."""
    topo = tmp_path / (impl + ".yaml")
    a = {"send_to": "b", "count": 4, **params}
    topo.write_text("nodes:\n  - {{ id: a, impl: {}, params: {} }}\n  - {{ id: b, impl: {} }}\n"
                    "edges:\n  - {{ src: a, dst: b, bandwidth_gbs: 64, latency_ns: 1, bidir: true }}\n"
                    .format(impl, json.dumps(a), impl))
    return str(topo)


def system_run(cli, tmp_path, impl, *extra, **params):
    comps = tmp_path / "components.yaml"
    comps.write_text("components:\n  acme.pinger: { library: test_pinger, type: acme_pinger }\n"
                     "  py.pinger: { library: pinger.py, type: py_pinger }\n")
    out = tmp_path / ("out-" + impl)
    code, stdout, err = cli("run", "--plugins", EXAMPLES, "--plugins", CPP_PINGER, "--components", str(comps),
                            "--topology", pingers(tmp_path, impl, **params), "--out", str(out), *extra)
    assert code == 0, err
    with open(out / "results.json") as f:
        return json.load(f)


def test_the_guides_pinger_is_the_cpp_twin_word_for_word():
    with open(os.path.join(SOURCE, "sdk", "README.md")) as f:
        guide = f.read()
    block = re.search(r"`acme/pinger.cpp`.*?```cpp\n(.*?)```", guide, re.S).group(1)
    with open(os.path.join(SOURCE, "tests", "plugins", "pinger", "pinger.cpp")) as f:
        source = f.read()
    assert source.split("\n\n", 1)[1] == block


@pytest.mark.parametrize("params", [{}, {"count": 50, "interval_ns": 0.3, "ping_bytes": 4096}])
def test_py_pinger_gives_the_cpp_pingers_statistics(cli, tmp_path, params):
    cpp = system_run(cli, tmp_path, "acme.pinger", **params)
    py = system_run(cli, tmp_path, "py.pinger", **params)
    strip = lambda comps: {n: {k: v for k, v in c.items() if k != "impl"} for n, c in comps.items()}  # noqa: E731
    assert strip(py["components"]) == strip(cpp["components"])
    assert py["links"] == cpp["links"]
    assert py["sim_time_ns"] == cpp["sim_time_ns"] and py["events"] == cpp["events"]
    if not params:
        assert py["components"]["b"]["received"] == 4 and py["components"]["b"]["latency_mean_ns"] == 2.0


def test_list_and_info_show_a_block_with_its_parameters_ports_and_statistics(cli):
    code, out, err = cli("info", "py_pinger", "--plugins", EXAMPLES)
    assert code == 0, err
    assert "library: pinger.py" in out
    for word in ("send_to", "interval_ns", "latency_mean_ns", "mean ping latency", "any link"):
        assert word in out


def test_the_harness_from_pytest_times_a_block_exactly():
    h = kbsim.testing.Harness()
    h.block(pinger.Pinger, {"send_to": "peer", "count": 2, "interval_ns": 5.0})
    link = {"bandwidth_gbs": 64, "latency_ns": 2}
    peer = h.neighbour("peer", "link", to_component=link, from_component=link)
    h.build()
    h.run()
    assert [(t, m.bytes, m.type) for t, m in peer.received] == [(3.0, 64, "python.Message"),
                                                                (8.0, 64, "python.Message")]  # 64 B in 1 ns + 2 ns
    assert h.stat("sent") == (2, 0.0)


def test_the_harness_delivers_what_a_neighbour_injects():
    h = kbsim.testing.Harness()
    h.block(pinger.Pinger)
    peer = h.neighbour("peer", "link", to_component={"bandwidth_gbs": 64, "latency_ns": 2})
    h.build()
    h.inject(1.0, "peer", kbsim.Message(bytes=128, data=0))  # sent at t = 0 ps, per its data
    h.run()
    assert h.stat("received") == (1, 0.0)
    assert h.stat("latency_mean_ns")[1] == 5.0  # injected at 1 ns, + 128 B in 2 ns + 2 ns (finish() not yet run)
    assert peer.received == []


BAD = """
    import kbsim

    @kbsim.component("py_bad", "fails", params=[kbsim.Param("mode", "raise", "raise, fail or reject")],
                     stats=[kbsim.Stat("n")])
    class Bad(kbsim.Block):
        def __init__(self):
            if self.params["mode"] == "reject":
                self.reject("mode", "must not be reject")
        def setup(self):
            self.schedule(2.5)
        def on_timer(self, tag, msg):
            if self.params["mode"] == "fail":
                self.fail("out of credits")
            return 1 / 0
    """


@pytest.mark.parametrize("mode, code, message", [
    ("raise", 5, "t=2.5 ns: x: component fault (py.bad, library bad.py): {}:15 in on_timer: ZeroDivisionError"),
    ("fail", 5, "t=2.5 ns: x: out of credits ({}:14 in on_timer)"),
    ("reject", 3, "{}:9 in __init__: {}:2:44: parameter 'mode' must not be reject"),
])
def test_a_blocks_errors_are_one_line_naming_its_line_the_node_and_the_time(cli, tmp_path, mode, code, message):
    d = plugin_dir(tmp_path, bad=BAD)
    comps, topo = tmp_path / "c.yaml", tmp_path / "t.yaml"
    comps.write_text("components:\n  py.bad: { library: bad.py, type: py_bad }\n")
    topo.write_text("nodes:\n  - {{ id: x, impl: py.bad, params: {{ mode: {} }} }}\n".format(mode))
    got, _, err = cli("run", "--plugins", d, "--components", str(comps), "--topology", str(topo), "--out",
                      str(tmp_path / "out"))
    assert got == code, err
    assert err.strip().count("\n") == 0
    assert message.format(os.path.join(os.path.realpath(d), "bad.py"), topo) in err


@needs_mpirun
def test_a_split_run_of_python_blocks_gives_the_same_results(cli, mpirun_cli, tmp_path):
    whole = system_run(cli, tmp_path, "py.pinger", count=20)
    comps = tmp_path / "components.yaml"
    code, out, err = mpirun_cli(2, "run", "--plugins", EXAMPLES, "--plugins", CPP_PINGER, "--components", str(comps),
                                "--topology", pingers(tmp_path, "py.pinger", count=20), "--out", str(tmp_path / "split"))
    assert code == 0, err
    assert "split      2 ranks" in out  # the pings cross between the processes, pickled
    with open(tmp_path / "split" / "results.json") as f:
        split = json.load(f)
    for key in ("components", "links", "sim_time_ns", "events"):
        assert split[key] == whole[key]


@kbsim.component("py_test_faulty", "raises on its first timer, or rejects its parameter",
                 params=[kbsim.Param("reject", False, "refuse the parameter")])
class Faulty(kbsim.Block):
    def __init__(self):
        if self.params["reject"]:
            self.reject("reject", "must be false")

    def setup(self):
        self.schedule(1.5)

    def on_timer(self, tag, msg):
        raise KeyError("no such queue")


def test_the_harness_raises_a_blocks_errors_as_kbsim_errors():
    h = kbsim.testing.Harness()
    h.block(Faulty, {"reject": True})
    with pytest.raises(kbsim.ConfigError, match="parameter 'reject' must be false"):
        h.build()
    h = kbsim.testing.Harness()
    h.block(Faulty)
    h.build()
    with pytest.raises(kbsim.SimulationError) as e:
        h.run()
    assert "t=1.5 ns: dut: component fault" in str(e.value)
    assert "test_plugin_blocks.py:{} in on_timer: KeyError: 'no such queue'".format(
        Faulty.on_timer.__code__.co_firstlineno + 1) in str(e.value)
    with pytest.raises(kbsim.PluginError, match="kbsim.testing.Harness tests a block of a plugin file with block"):
        kbsim.testing.Harness(plugins=[EXAMPLES])


def test_what_python_keeps_of_a_finished_run_says_so_and_a_bad_route_is_a_config_error():
    h = kbsim.testing.Harness()
    h.block(pinger.Pinger, {"send_to": "peer", "count": 1})
    peer = h.neighbour("peer", "link")
    h.build()
    h.run()
    (_, msg), = peer.received
    assert msg.route.nodes[-1] != msg.route.nodes[0]  # dut to peer
    del h, peer  # the system goes (its neighbours kept it); the message stays, its route does not
    with pytest.raises(ValueError, match="no longer exists"):
        msg.route.nodes
    h = kbsim.testing.Harness()
    h.block(pinger.Pinger, {"send_to": "nowhere"})
    with pytest.raises(kbsim.ConfigError, match="nowhere"):
        h.build()

"""kbsim.System: the configured system as kbsim topology gives it."""

import pytest

import kbsim


def test_the_default_system_has_its_nodes_links_and_views():
    s = kbsim.System()
    assert len(s.nodes) == 4175 and len(s.links) == 13684
    assert s.node("fabric.switch0")["impl"] == "builtin.switch"
    assert {"system", "sip", "cube", "pe"} <= set(s.views())
    svg = s.view("pe")
    assert isinstance(svg, kbsim.SVG) and "<svg" in svg._repr_svg_() and str(svg).rstrip().endswith("</svg>")
    assert "<svg" in s._repr_svg_()
    with pytest.raises(KeyError):
        s.view("nope")


def test_set_changes_the_system_and_a_bad_one_is_a_config_error():
    one = kbsim.System(set={"system.sips.count": 1})
    assert len(one.nodes) < 4175
    assert not any(n["id"].startswith("sip1.") for n in one.nodes)
    with pytest.raises(kbsim.ConfigError) as e:
        kbsim.System(set={"system.sips.cuont": 1})
    assert "cuont" in str(e.value) and e.value.exit_code == 3


def test_a_quiet_run_prints_nothing(capfd):
    kbsim.run("pe-dma-perf", quiet=True)
    assert capfd.readouterr().out == ""
    kbsim.run("pe-dma-perf")
    assert "bench pe-dma-perf" in capfd.readouterr().out

"""llama-layer's checks (ctest llama_layer.pytest): the layer verified against numpy on 1, 2 and 4 SIPs, its phases,
its roofline, the headline decode step's bottleneck, and its errors."""

import os
import shutil
import subprocess

import kbsim
import pytest

BUILD = os.environ.get("KBSIM_BUILD_DIR", "build")

VALIDATION = {"scale": "validation"}


def run(params, sips, verify=True):
    return kbsim.run("llama-layer", params=params, set={"system.sips.count": sips}, verify_data=verify, quiet=True)


def check_phases(m):
    """The phases add up to the latency, and none beats its roofline bound."""
    assert list(m["phases"]) == ["norm1", "qkv", "attention", "out_proj", "allreduce1", "norm2", "mlp", "allreduce2",
                                 "residual"]
    assert sum(m["phases"].values()) == pytest.approx(m["latency_ns"], abs=1e-6)
    for name, d in m["phase_detail"].items():
        assert d["ns"] >= d["bound_ns"] > 0, name


@pytest.mark.parametrize("sips,latency_ns", [(1, 9322.266), (2, 10548.293), (4, 12380.787)])
def test_a_decode_step_matches_the_layer_computed_directly_on_every_rank(sips, latency_ns):
    r = run(VALIDATION, sips)
    m = r.metrics
    assert m["max_abs_error"] < 0.01  # the check itself fails the run beyond its tolerance
    assert m["tp"] == sips
    assert m["latency_ns"] == pytest.approx(latency_ns, abs=1e-9)  # simulated, so exact
    check_phases(m)
    if sips > 1:  # the all_reduces cross the links between SIPs; nothing else does
        assert m["phase_detail"]["allreduce1"]["link_bytes"] > 0
        assert m["phase_detail"]["mlp"]["link_bytes"] == 0


def test_prefill_writes_the_cache_and_matches_the_layer_computed_directly():
    m = run(dict(VALIDATION, phase="prefill"), 2).metrics
    assert m["tokens"] == 32 and m["max_abs_error"] < 0.1
    check_phases(m)


def test_all_reduce_buckets_and_row_blocks_give_the_same_output():
    # 8 KiB buckets of 8 tokens: 4 all_reduces per phase, kernels walking their rows a bucket at a time.
    one = run(dict(VALIDATION, phase="prefill"), 2).metrics
    four = run(dict(VALIDATION, phase="prefill", bucket_kib=8), 2).metrics
    assert four["max_abs_error"] == one["max_abs_error"]
    assert four["phases"]["allreduce1"] > one["phases"]["allreduce1"]  # four collectives, one after another


def test_values_do_not_change_the_timing():
    assert run(VALIDATION, 2, verify=False).metrics["latency_ns"] == run(VALIDATION, 2).metrics["latency_ns"]


def test_the_headline_decode_step_streams_the_weights_at_close_to_the_hbm_peak():
    m = run({}, 1, verify=False).metrics
    check_phases(m)
    mlp = m["phase_detail"]["mlp"]
    assert mlp["bottleneck"] == "HBM" and mlp["ratio"] < 1.5
    assert m["hbm_gbs"] > 0.6 * m["hbm_peak_gbs"]
    assert m["weights_hbm_gbs"] > 0.75 * m["hbm_peak_gbs"]  # while the projections stream their weights
    assert m["tokens_per_s"] == pytest.approx(1e9 / m["latency_ns"])


def test_bad_parameters_are_one_line_errors(tmp_path):
    with pytest.raises(kbsim.ConfigError, match="phase must be prefill or decode"):
        run({"phase": "train"}, 1, verify=False)
    with pytest.raises(kbsim.ConfigError, match="tp=2 but the system has 1 SIPs: set system.sips.count"):
        run(dict(VALIDATION, tp=2), 1, verify=False)
    with pytest.raises(kbsim.ConfigError, match="heads .* must be a multiple of the SIPs used"):
        run({"heads": 60, "kv_heads": 4}, 8, verify=False)


SMALL_SWEEP = {"sips": "1,2", "contexts": "256", "seqs": "16", "prefill_algorithms": "ring_allreduce",
               "focus_context": 256}


def test_the_sweep_writes_its_figures_and_the_same_points_under_mpirun(tmp_path):
    r = kbsim.run("milestone-llama", params=SMALL_SWEEP, jobs=2, out=tmp_path / "j2", quiet=True)
    assert r.metrics["points"] == 3 and r.metrics["failed"] == 0
    for f in ("index.html", "llama_points.csv", "llama_decode_latency.svg", "llama_decode_tokens.svg",
              "llama_prefill_latency.svg", "llama_phases.svg", "llama_roofline.svg"):
        assert (tmp_path / "j2" / f).stat().st_size > 0, f
    assert set(r.metrics["decode_latency_ns"]) == {"1_sips", "2_sips"}
    if shutil.which("mpirun") is None:
        return
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    args = [w for k, v in SMALL_SWEEP.items() for w in ("--param", "{}={}".format(k, v))]
    p = subprocess.run(["mpirun", "-q", "--oversubscribe", "-np", "2", os.path.join(BUILD, "bin", "kbsim"), "run",
                        "--bench", "milestone-llama", *args, "--out", str(tmp_path / "mpi")],
                       capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "mpi" / "llama_points.csv").read_text() == (tmp_path / "j2" / "llama_points.csv").read_text()

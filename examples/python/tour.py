"""A first hour with kbsim from Python: the default system, one of its views, a bench, a sweep into a DataFrame and a
figure, then a live system driven tensor by tensor. The notebook tour.ipynb is the same tour, cell by cell.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/tour.py [OUT_DIR]
"""

import os
import sys

import matplotlib

matplotlib.use("Agg")  # a script draws into files; the notebook shows its figures inline
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import kbsim  # noqa: E402

out = sys.argv[1] if len(sys.argv) > 1 else "kbsim-tour"
os.makedirs(out, exist_ok=True)

# 1. The configured system: its nodes, links and views (the default topology unless topology= names a file).
system = kbsim.System()
print("{} nodes, {} links; views: {}".format(len(system.nodes), len(system.links), ", ".join(system.views())))
system.view("system").save(os.path.join(out, "system.svg"))

# 2. A bench, as `kbsim run --bench pe-dma-perf` runs it: metrics, the whole results.json, the files it wrote.
r = kbsim.run("pe-dma-perf")
print("pe-dma-perf: sim time {} ns, {} events; files {}".format(r.sim_time_ns, r.events, sorted(r.files)))
links = r.links_frame()
print(links.sort_values("busy_ns", ascending=False).head(3).to_string(index=False))

# 3. A sweep: the allreduce over sizes and algorithms, two worker processes, one row per point.
sizes = [1024, 4096, 16384]
algorithms = ["lrab_hierarchical_allreduce", "ring_allreduce", "direct_allreduce"]
points = [("ccl-allreduce", {"n_elem": n}, {"ccl.defaults.algorithm": a}) for a in algorithms for n in sizes]
df = kbsim.frame(kbsim.sweep(points, jobs=2))  # the bench's metrics include algorithm, n_elem and crit_ns
print(df[["algorithm", "n_elem", "crit_ns", "sim_time_ns"]].to_string(index=False))

fig, ax = plt.subplots(figsize=(6, 4))
for name, rows in df.groupby("algorithm"):
    ax.plot(rows["n_elem"] * 2 / 1024, rows["crit_ns"], marker="o", label=name)
ax.set_xscale("log", base=2)
ax.set_xlabel("KiB per cube")
ax.set_ylabel("critical path (ns)")
ax.set_title("all_reduce over the SIPs of the default system")
ax.legend()
fig.tight_layout()
fig.savefig(os.path.join(out, "allreduce.svg"))

# 4. A live system: a tensor through numpy, a kernel by name, and the time it took.
with kbsim.Session(verify_data=True) as s:
    rt = s.runtime
    x = rt.tensor(np.linspace(-1, 1, 16 * 64, dtype=np.float16).reshape(16, 64), kbsim.Placement(pe="column",
                                                                                             num_pes=4))
    z = rt.empty((16, 64), "f16", kbsim.Placement(pe="column", num_pes=4))
    launch = rt.launch("host-tour-scale", x, z, 16, 64, 0.5).wait()
    assert np.array_equal(z.numpy(), x.numpy() * np.float16(0.5))
    print("host-tour-scale on {} PEs: {:.1f} ns on the PEs, {:.1f} ns from submit to done; now {:.1f} ns".format(
        len(launch["pes"]), launch["pe_exec_ns"], launch.elapsed_ns, rt.now_ns))
print("figures in", out)

#include "python_algorithm.hpp"

#include <pybind11/stl.h>

#include <utility>

#include "channel.hpp"
#include "python_kernel.hpp"

namespace py = pybind11;

namespace kbsim::python {

namespace {

py::tuple shape_of(const ccl::SystemShape& s) {
  return py::make_tuple(s.sips, s.sip_w, s.sip_h, std::string(ccl::kSipTopologyNames[static_cast<int>(s.topology)]),
                        s.cube_w, s.cube_h, s.pes_per_cube);
}

/// A Collective as _Instance's launch and min_slot_size take it.
py::tuple args_of(const ccl::Collective& c) {
  return py::make_tuple(shape_of(c.setup.system), c.setup.world_size, params_dict(c.setup.params), c.rank, c.n_elem,
                        std::string(dtype_name(c.dtype)), c.cube_w, c.cube_h);
}

}  // namespace

PythonAlgorithm::PythonAlgorithm(std::string file, const std::string& name) : file_(std::move(file)) {
  call_python(file_, [&] { obj_ = py::module_::import("kbsim._plugins").attr("make_algorithm")(file_, name); });
}

PythonAlgorithm::~PythonAlgorithm() {
  on_python_stack([this] {
    const py::gil_scoped_acquire gil;
    obj_ = py::object();
  });
}

std::vector<ccl::Wire> PythonAlgorithm::wiring(const ccl::Setup& setup) const {
  std::vector<ccl::Wire> out;
  call_python(file_, [&] {
    const py::list got = obj_.attr("wiring")(shape_of(setup.system), setup.world_size, params_dict(setup.params));
    for (const py::handle& w : got) {
      auto [s, c, p, dir, ts, tc, tp] =
          w.cast<std::tuple<unsigned, unsigned, unsigned, std::string, unsigned, unsigned, unsigned>>();
      out.push_back({{s, c, p}, std::move(dir), {ts, tc, tp}});
    }
  });
  return out;
}

ccl::Launch PythonAlgorithm::launch(const ccl::Collective& c) const {
  ccl::Launch out;
  call_python(file_, [&] {
    const py::tuple got = obj_.attr("launch")(*args_of(c));
    out.kernel = got[0].cast<std::string>();
    out.grid_cubes = got[1].cast<unsigned>();
    out.grid_pes = got[2].cast<unsigned>();
    for (const py::handle& a : got[3].cast<py::list>())
      out.args.push_back(py::isinstance<py::float_>(a) ? ccl::Scalar{a.cast<double>()}
                                                       : ccl::Scalar{a.cast<std::int64_t>()});
  });
  return out;
}

std::uint64_t PythonAlgorithm::min_slot_size(const ccl::Collective& c) const {
  std::uint64_t out = 0;
  call_python(file_, [&] { out = obj_.attr("min_slot_size")(*args_of(c)).cast<std::uint64_t>(); });
  return out;
}

}  // namespace kbsim::python

// The _kbsim classes Python drives a running bench with (channel.hpp): Channel, Call (one call, made by one of the
// factories below and run on the bench's thread), Tensor and Placement. Python's input is checked here,
// before a call is made, so a wrong type, shape or dtype, or a freed tensor, raises without ending the session.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstring>

#include "channel.hpp"
#include "kbsim/pe/ccl.hpp"
#include "kbsim/pe/plan.hpp"

namespace py = pybind11;

namespace kbsim::python {

Shape shape_of(const std::vector<std::int64_t>& dims) {
  for (std::int64_t d : dims)
    if (d < 1) throw py::value_error("a tensor's dims must be positive, not " + std::to_string(d));
  switch (dims.size()) {
    case 1: return Shape{dims[0]};
    case 2: return Shape{dims[0], dims[1]};
    case 3: return Shape{dims[0], dims[1], dims[2]};
    case 4: return Shape{dims[0], dims[1], dims[2], dims[3]};
    default: throw py::value_error("a tensor has 1 to 4 dims, not " + std::to_string(dims.size()));
  }
}

DType dtype_of(const std::string& name) {
  try {
    return parse_dtype(name);
  } catch (const std::invalid_argument& e) {
    throw py::value_error(e.what());
  }
}

namespace {

using CallPtr = std::shared_ptr<Call>;

CallPtr make(std::function<void(Channel&, Call&)> work) {
  auto c = std::make_shared<Call>();
  c->work = std::move(work);
  return c;
}

rt::Split split_of(const std::string& s) {
  if (s == "replicate") return rt::Split::kReplicate;
  if (s == "column") return rt::Split::kColumnWise;
  if (s == "row") return rt::Split::kRowWise;
  if (s == "tiled_row_major") return rt::Split::kTiledRowMajor;
  if (s == "tiled_column_major") return rt::Split::kTiledColumnMajor;
  throw py::value_error("unknown split '" + s + "' (replicate, row, column, tiled_row_major, tiled_column_major)");
}

const char* split_name(rt::Split s) {
  switch (s) {
    case rt::Split::kReplicate: return "replicate";
    case rt::Split::kColumnWise: return "column";
    case rt::Split::kRowWise: return "row";
    case rt::Split::kTiledRowMajor: return "tiled_row_major";
    case rt::Split::kTiledColumnMajor: return "tiled_column_major";
  }
  return "?";
}

rt::DPPolicy policy_of(const std::string& cube, const std::string& pe, unsigned num_pes, unsigned num_cubes,
                       const std::string& space) {
  rt::DPPolicy p{split_of(cube), split_of(pe), num_pes, num_cubes, rt::Space::kHbm};
  if (space == "tcm") {
    p.space = rt::Space::kTcm;
  } else if (space != "hbm") {
    throw py::value_error("unknown space '" + space + "' (hbm, tcm)");
  }
  return p;
}

/// A tensor Python may use: one of a session's, not freed.
const rt::Tensor& usable(const rt::Tensor& t) {
  if (!t.valid()) throw py::value_error("an empty tensor");
  if (t.info().freed) throw py::value_error("tensor '" + t.name() + "' was freed");
  return t;
}

py::dict launch_dict(const rt::LaunchResult& r) {
  py::dict d;
  d["kernel"] = r.kernel;
  d["ok"] = r.completion.ok;
  d["error"] = r.completion.ok ? std::string() : r.completion.error_code + ": " + r.completion.error_message;
  d["t_submit_ns"] = ticks_to_ns(r.t_submit);
  d["t_done_ns"] = ticks_to_ns(r.t_done);
  d["launch_ns"] = ticks_to_ns(r.t_done - r.t_submit);
  d["pe_exec_ns"] = r.pe_exec_ns;
  d["dma_ns"] = r.dma_ns;
  d["compute_ns"] = r.compute_ns;
  py::list pes;
  for (const ahbm::PeResult& p : r.pes) {
    py::dict e;
    e["sip"] = p.pe.sip;
    e["cube"] = p.pe.cube;
    e["pe"] = p.pe.pe;
    e["start_ns"] = ticks_to_ns(p.start);
    e["end_ns"] = ticks_to_ns(p.end);
    e["pe_exec_ns"] = p.pe_exec_ns;
    e["dma_ns"] = p.dma_ns;
    e["compute_ns"] = p.compute_ns;
    e["commands"] = p.commands;
    e["composite_window_ns"] =
        p.composite_first <= p.composite_last ? ticks_to_ns(p.composite_last - p.composite_first) : 0.0;
    py::dict stages;
    for (std::size_t k = 0; k < p.stage_busy_ns.size(); ++k)
      stages[py::str(std::string(pe::stage_name(static_cast<pe::StageType>(k))))] = p.stage_busy_ns[k];
    e["stage_busy_ns"] = stages;
    py::dict phases;
    for (const auto& [name, at] : p.phases) phases[py::str(name)] = ticks_to_ns(at);
    e["phases"] = phases;
    pes.append(e);
  }
  d["pes"] = pes;
  return d;
}

py::dict transfer_dict(const rt::TransferResult& r) {
  py::dict d;
  d["t_submit_ns"] = ticks_to_ns(r.t_submit);
  d["t_done_ns"] = ticks_to_ns(r.t_done);
  d["bytes"] = r.bytes;
  return d;
}

void bind_tensor(py::module_& m) {
  py::class_<rt::Tensor>(m, "Tensor")
      .def_property_readonly("name", &rt::Tensor::name)
      .def_property_readonly("shape",
                             [](const rt::Tensor& t) {
                               py::list dims;
                               for (std::size_t i = 0; i < t.shape().rank(); ++i) dims.append(t.shape()[i]);
                               return py::tuple(dims);
                             })
      .def_property_readonly("dtype", [](const rt::Tensor& t) { return std::string(dtype_name(t.dtype())); })
      .def_property_readonly("nbytes", &rt::Tensor::nbytes)
      .def_property_readonly("va", &rt::Tensor::va)
      .def_property_readonly("freed", [](const rt::Tensor& t) { return t.info().freed; })
      .def_property_readonly("placement",
                             [](const rt::Tensor& t) {
                               const rt::DPPolicy& p = t.policy();
                               py::dict d;
                               d["cube"] = split_name(p.cube);
                               d["pe"] = split_name(p.pe);
                               d["num_pes"] = p.num_pes;
                               d["num_cubes"] = p.num_cubes;
                               d["space"] = p.space == rt::Space::kTcm ? "tcm" : "hbm";
                               return d;
                             })
      .def_property_readonly("shards", [](const rt::Tensor& t) {
        py::list out;
        for (const rt::ShardSpec& s : t.shards()) {
          py::dict d;
          d["sip"] = s.sip;
          d["cube"] = s.cube;
          d["pe"] = s.pe;
          d["offset_bytes"] = s.offset_bytes;
          d["nbytes"] = s.nbytes;
          py::list dims;
          for (std::size_t i = 0; i < s.shape.rank(); ++i) dims.append(s.shape[i]);
          d["shape"] = py::tuple(dims);
          d["va"] = s.va;
          d["pa"] = s.pa;
          out.append(d);
        }
        return out;
      });
}

/// The calls of the host runtime (rt::Runtime), as factories of Call.
void bind_runtime_calls(py::class_<Call, CallPtr>& c) {
  c.def_static("empty",
               [](const std::vector<std::int64_t>& dims, const std::string& dtype, const rt::DPPolicy& p,
                  std::string name, bool zeros) {
                 const Shape s = shape_of(dims);
                 const DType t = dtype_of(dtype);
                 return make([s, t, p, name = std::move(name), zeros](Channel& ss, Call& c) {
                   c.tensor = zeros ? ss.runtime().zeros(s, t, p, name) : ss.runtime().empty(s, t, p, name);
                 });
               })
      .def_static("from_bytes",
                  [](const std::vector<std::int64_t>& dims, const std::string& dtype, const py::bytes& data,
                     const rt::DPPolicy& p, std::string name) {
                    const Shape s = shape_of(dims);
                    const DType t = dtype_of(dtype);
                    const std::string_view raw = data;
                    if (raw.size() != static_cast<std::size_t>(s.elements()) * dtype_size(t))
                      throw py::value_error("a " + s.str() + " " + std::string(dtype_name(t)) + " tensor needs " +
                                            std::to_string(s.elements() * dtype_size(t)) + " bytes, not " +
                                            std::to_string(raw.size()));
                    std::vector<std::byte> bytes(raw.size());
                    std::memcpy(bytes.data(), raw.data(), raw.size());
                    return make([s, t, p, name = std::move(name), bytes = std::move(bytes)](Channel& ss, Call& c) {
                      c.tensor = ss.runtime().empty(s, t, p, name);
                      c.transfer = ss.runtime().write(c.tensor, bytes);
                    });
                  })
      .def_static("from_values",
                  [](const std::vector<std::int64_t>& dims, const std::string& dtype,
                     const py::array_t<double, py::array::c_style | py::array::forcecast>& values,
                     const rt::DPPolicy& p, std::string name) {
                    const Shape s = shape_of(dims);
                    const DType t = dtype_of(dtype);
                    if (values.size() != s.elements())
                      throw py::value_error("a " + s.str() + " tensor needs " + std::to_string(s.elements()) +
                                            " values, not " + std::to_string(values.size()));
                    std::vector<double> v(values.data(), values.data() + values.size());
                    return make([s, t, p, name = std::move(name), v = std::move(v)](Channel& ss, Call& c) {
                      c.tensor = ss.runtime().from_host(s, t, v, p, name);
                    });
                  })
      .def_static("free",
                  [](const rt::Tensor& t) {
                    return make([t = usable(t)](Channel& ss, Call&) mutable { ss.runtime().free(t); });
                  })
      .def_static("write",
                  [](const rt::Tensor& t, const py::bytes& data) {
                    const std::string_view raw = data;
                    if (raw.size() != usable(t).nbytes())
                      throw py::value_error("tensor '" + t.name() + "' holds " + std::to_string(t.nbytes()) +
                                            " bytes, not " + std::to_string(raw.size()));
                    std::vector<std::byte> bytes(raw.size());
                    std::memcpy(bytes.data(), raw.data(), raw.size());
                    return make([t, bytes = std::move(bytes)](Channel& ss, Call& c) {
                      c.transfer = ss.runtime().write(t, bytes);
                    });
                  })
      .def_static("read",
                  [](const rt::Tensor& t) {
                    return make([t = usable(t)](Channel& ss, Call& c) { c.bytes = ss.runtime().read(t, &c.transfer); });
                  })
      .def_static("read_values",
                  [](const rt::Tensor& t) {
                    return make([t = usable(t)](Channel& ss, Call& c) { c.values = ss.runtime().read_values(t); });
                  })
      .def_static("copy",
                  [](const rt::Tensor& dst, const rt::Tensor& src) {
                    return make([dst = usable(dst), src = usable(src)](Channel& ss, Call& c) {
                      c.transfer = ss.runtime().copy(dst, src);
                    });
                  })
      .def_static("summary",
                  [](const rt::Tensor& t) {
                    return make([t = usable(t)](Channel& ss, Call& c) { c.text = ss.runtime().summary(t); });
                  })
      .def_static("read_slice",
                  [](const rt::Tensor& t, std::int64_t row, std::int64_t col, std::int64_t rows, std::int64_t cols) {
                    return make([t = usable(t), r = rt::Region{row, col, rows, cols}](Channel& ss, Call& c) {
                      c.values = ss.runtime().read_slice(t, r);
                    });
                  })
      .def_static("write_slice",
                  [](const rt::Tensor& t, std::int64_t row, std::int64_t col, std::int64_t rows, std::int64_t cols,
                     std::vector<double> values) {
                    return make([t = usable(t), r = rt::Region{row, col, rows, cols}, v = std::move(values)](
                                    Channel& ss, Call& c) { c.transfer = ss.runtime().write_slice(t, r, v); });
                  })
      .def_static("launch",
                  [](std::string kernel, const std::vector<rt::Arg>& args, int sip, unsigned grid_pes,
                     unsigned grid_cubes, bool auto_dim_remap, const std::string& failure_policy) {
                    for (const rt::Arg& a : args)
                      if (const auto* t = std::get_if<rt::Tensor>(&a)) usable(*t);
                    rt::LaunchOptions o;
                    if (sip >= 0) o.sip = static_cast<unsigned>(sip);
                    o.grid_pes = grid_pes;
                    o.grid_cubes = grid_cubes;
                    o.auto_dim_remap = auto_dim_remap;
                    if (failure_policy == "collect_all") {
                      o.failure_policy = ahbm::FailurePolicy::kCollectAll;
                    } else if (failure_policy != "fail_fast") {
                      throw py::value_error("unknown failure_policy '" + failure_policy + "' (fail_fast, collect_all)");
                    }
                    return make([kernel = std::move(kernel), args, o](Channel& ss, Call& c) {
                      c.handle = ss.runtime().launch(kernel, args, o);
                    });
                  })
      .def_static(
          "wait",
          [](std::uint64_t handle) {
            return make([handle](Channel& ss, Call& c) { c.launch = ss.runtime().wait(rt::LaunchHandle{handle}); });
          })
      .def_static("wait_all", [] { return make([](Channel& ss, Call&) { ss.runtime().wait_all(); }); })
      .def_static("set_device",
                  [](unsigned sip) { return make([sip](Channel& ss, Call&) { ss.runtime().set_device(sip); }); })
      .def_static("device", [] {
        return make([](Channel& ss, Call& c) {
          rt::Runtime& r = ss.runtime();
          c.device = {r.current_device(), r.cubes_per_sip(), r.pes_per_cube(), r.now()};
        });
      });
}

/// The calls of the distributed runtime (rt::Distributed) and of the session's bench context.
void bind_other_calls(py::class_<Call, CallPtr>& c) {
  c.def_static("init_process_group",
               [](std::string backend, std::int64_t fit_n_elem) {
                 return make([backend = std::move(backend), fit_n_elem](Channel& ss, Call&) {
                   ccl::Config cfg = ccl::config(ss.ctx());
                   const auto need =
                       fit_n_elem <= 0
                           ? 0
                           : cfg.fit_slot(ccl::SystemShape::from(ss.ctx().configured().attrs()),
                                          static_cast<std::uint64_t>(fit_n_elem), "init_process_group(fit_n_elem)");
                   if (need)
                     ss.ctx().note("slot_size raised to " + std::to_string(need) + " bytes: " + cfg.algorithm +
                                   " needs it for shards of " + std::to_string(fit_n_elem) + " elements (fit_n_elem)");
                   ss.distributed().init_process_group(cfg, backend);
                 });
               })
      .def_static("process_group",
                  [] {
                    return make([](Channel& ss, Call& c) {
                      rt::Distributed& d = ss.distributed();
                      c.group = {d.is_initialized(), d.get_rank(), d.is_initialized() ? d.get_world_size() : 0u};
                    });
                  })
      .def_static("all_reduce",
                  [](const rt::Tensor& t, std::string op) {
                    return make([t = usable(t), op = std::move(op)](Channel& ss, Call&) {
                      ss.distributed().all_reduce(t, op);
                    });
                  })
      .def_static("barrier", [] { return make([](Channel& ss, Call&) { ss.distributed().barrier(); }); })
      .def_static("spawn", [](unsigned n) { return make([n](Channel& ss, Call&) { ss.spawn(n); }); })
      .def_static("collectives",
                  [] { return make([](Channel& ss, Call& c) { c.collectives = ss.distributed().collectives(); }); });
}

/// A metric's value from Python: a scalar, or a dict (an object) or list of them.
Metrics::Scalar scalar_of(const py::handle& value) {
  if (py::isinstance<py::bool_>(value)) return value.cast<bool>();
  if (py::isinstance<py::int_>(value)) return value.cast<std::int64_t>();
  if (py::isinstance<py::float_>(value)) return value.cast<double>();
  if (py::isinstance<py::str>(value)) return value.cast<std::string>();
  if (py::hasattr(value, "item") && py::hasattr(value, "dtype")) return scalar_of(value.attr("item")());  // numpy
  throw py::type_error("a metric is a bool, int, float, str, dict or list, not " +
                       std::string(py::str(value.get_type().attr("__name__"))));
}

void fill(Metrics& out, const py::handle& value, const std::string& path) {
  auto add = [&](const std::string& key, const py::handle& v) {
    const std::string where = out.is_list() ? path + "[" + std::to_string(out.entries().size()) + "]"
                                            : (path.empty() ? key : path + "." + key);
    const bool is_dict = py::isinstance<py::dict>(v);
    if (is_dict || py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v)) {
      fill(out.is_list() ? (is_dict ? out.append() : out.append_list()) : (is_dict ? out.object(key) : out.list(key)),
           v, where);
      return;
    }
    Metrics::Scalar scalar;
    try {
      scalar = scalar_of(v);
    } catch (const py::cast_error&) {
      throw py::type_error("metric '" + where + "': " + std::string(py::repr(v)) + " does not fit a metric");
    } catch (const py::type_error& e) {
      throw py::type_error("metric '" + where + "': " + e.what());
    } catch (py::error_already_set& e) {  // numpy's item() of an array of several values
      throw py::type_error("metric '" + where + "': " + std::string(py::str(e.value())));
    }
    out.is_list() ? out.append(std::move(scalar)) : out.set(key, std::move(scalar));
  };
  if (py::isinstance<py::dict>(value)) {
    for (const auto& [k, v] : value.cast<py::dict>()) add(py::str(k), v);
  } else {
    for (const py::handle& v : value) add("", v);
  }
}

/// `src`'s entries into `dst` (an object's keys replace what `dst` had under them).
void merge(Metrics& dst, const Metrics& src) {
  for (const Metrics::Entry& e : src.entries()) {
    if (!e.node) {
      dst.is_list() ? dst.append(e.scalar) : dst.set(e.key, e.scalar);
    } else if (dst.is_list()) {
      merge(e.node->is_list() ? dst.append_list() : dst.append(), *e.node);
    } else {
      merge(e.node->is_list() ? dst.list(e.key) : dst.object(e.key), *e.node);
    }
  }
}

py::object to_python(const Metrics& m) {
  auto scalar = [](const Metrics::Scalar& v) { return std::visit([](const auto& x) { return py::cast(x); }, v); };
  if (m.is_list()) {
    py::list out;
    for (const Metrics::Entry& e : m.entries()) out.append(e.node ? to_python(*e.node) : scalar(e.scalar));
    return out;
  }
  py::dict out;
  for (const Metrics::Entry& e : m.entries()) out[py::str(e.key)] = e.node ? to_python(*e.node) : scalar(e.scalar);
  return out;
}

void bind_bench_calls(py::class_<Call, CallPtr>& c) {
  c.def_static("metrics",
               [](const py::dict& values) {
                 auto tree = std::make_shared<Metrics>();
                 fill(*tree, values, "");
                 return make([tree](Channel& ss, Call&) { merge(ss.ctx().metrics(), *tree); });
               })
      .def_static("stat",
                  [](std::string node, std::string name) {
                    return make([node = std::move(node), name = std::move(name)](Channel& ss, Call& c) {
                      const Stat& st = ss.ctx().configured().stat(node, name);
                      c.values = {static_cast<double>(st.count), st.value};
                    });
                  })
      .def_static("param",
                  [](std::string node, std::string name) {
                    return make([node = std::move(node), name = std::move(name)](Channel& ss, Call& c) {
                      const Params& p = ss.ctx().configured().component(node).params();
                      if (!p.has(name)) throw ConfigError("node '" + node + "' has no parameter '" + name + "'");
                      c.values = {p.get_float(name)};
                    });
                  })
      .def_static("route_bw",
                  [](std::string from, std::string to) {
                    return make([from = std::move(from), to = std::move(to)](Channel& ss, Call& c) {
                      double bw = 0.0;  // the narrowest limited link on the route (0: none is limited)
                      for (const RouteHop& h : ss.ctx().configured().route_info(from, to).hops)
                        if (h.link_bw_gbs > 0 && (bw == 0.0 || h.link_bw_gbs < bw)) bw = h.link_bw_gbs;
                      c.values = {bw};
                    });
                  })
      .def_static("link_bytes",
                  [](std::string kind) {
                    return make([kind = std::move(kind)](Channel& ss, Call& c) {
                      double bytes = 0.0;
                      for (const LinkUse& u : ss.ctx().configured().link_use())
                        if (u.kind == kind) bytes += static_cast<double>(u.bytes);
                      c.values = {bytes};
                    });
                  })
      .def_static("system_attr",
                  [](std::string name) {
                    return make([name = std::move(name)](Channel& ss, Call& c) {
                      const ParamValue* v = find_attr(ss.ctx().configured().attrs(), name);
                      if (!v) return;
                      if (const auto* i = std::get_if<std::int64_t>(v)) c.values = {static_cast<double>(*i)};
                      if (const auto* d = std::get_if<double>(v)) c.values = {*d};
                    });
                  })
      .def_static(
          "note",
          [](std::string line) { return make([line = std::move(line)](Channel& ss, Call&) { ss.ctx().note(line); }); })
      .def_static("write_file",
                  [](std::string name, const py::object& content) {
                    std::string data = py::isinstance<py::bytes>(content) ? content.cast<std::string>()
                                                                          : py::str(content).cast<std::string>();
                    return make([name = std::move(name), data = std::move(data)](Channel& ss, Call&) mutable {
                      ss.ctx().write_file(name, std::move(data));
                    });
                  })
      .def_static(
          "run_points",
          [](const std::vector<std::tuple<std::string, std::vector<std::string>, std::vector<std::string>>>& given) {
            std::vector<SweepPoint> points;
            for (const auto& [bench, params, overrides] : given) points.push_back({bench, params, overrides});
            return make([points = std::move(points)](Channel& ss, Call& c) { c.points = ss.ctx().run_points(points); });
          })
      .def_static("run_bench",
                  [](std::string name, std::vector<std::string> params, std::vector<std::string> overrides) {
                    return make([name = std::move(name), params = std::move(params), overrides = std::move(overrides)](
                                    Channel& ss, Call& c) {
                      c.points.clear();
                      PointResult& r = c.points.emplace_back();
                      merge(r.metrics, ss.ctx().run_bench(name, params, overrides));
                      r.ok = true;
                    });
                  })
      .def_property_readonly("points", [](const Call& c) {
        py::list out;
        for (const PointResult& p : c.points) out.append(py::make_tuple(p.ok, p.error, to_python(p.metrics)));
        return out;
      });
}

}  // namespace

void fill_metrics(Metrics& out, const py::handle& values) { fill(out, values, ""); }

py::dict params_dict(const Params& params) {
  py::dict out;
  for (const ParamEntry& e : params.entries())
    out[py::str(e.name)] = std::visit([](const auto& v) { return py::cast(v); }, e.value);
  return out;
}

std::vector<ParamSpec> param_specs(const py::list& params) {
  std::vector<ParamSpec> out;
  for (const py::handle& p : params) {
    auto [name, type, value, help] = p.cast<std::tuple<std::string, std::string, py::object, std::string>>();
    if (type == "bool") out.push_back(param_bool(name, value.cast<bool>(), help));
    if (type == "int") out.push_back(param_int(name, value.cast<std::int64_t>(), help));
    if (type == "float") out.push_back(param_float(name, value.cast<double>(), help));
    if (type == "string") out.push_back(param_string(name, value.cast<std::string>(), help));
  }
  return out;
}

void bind_calls(py::module_& m) {
  bind_tensor(m);
  py::class_<rt::DPPolicy>(m, "Placement")
      .def(py::init(&policy_of), py::arg("cube") = "replicate", py::arg("pe") = "replicate", py::arg("num_pes") = 1,
           py::arg("num_cubes") = 1, py::arg("space") = "hbm");
  py::class_<Call, CallPtr> call(m, "Call");
  call.def_property_readonly("tensor", [](const Call& c) { return c.tensor; })
      .def_property_readonly("handle", [](const Call& c) { return c.handle.id; })
      .def_property_readonly("launch_result", [](const Call& c) { return launch_dict(c.launch); })
      .def_property_readonly("transfer", [](const Call& c) { return transfer_dict(c.transfer); })
      .def_property_readonly(
          "bytes",
          [](const Call& c) { return py::bytes(reinterpret_cast<const char*>(c.bytes.data()), c.bytes.size()); })
      .def_property_readonly("values",
                             [](const Call& c) { return py::array_t<double>(c.values.size(), c.values.data()); })
      .def_property_readonly("collective_results",
                             [](const Call& c) {
                               py::list out;
                               for (const rt::CollectiveResult& r : c.collectives) {
                                 py::dict d;
                                 d["algorithm"] = r.algorithm;
                                 d["kernel"] = r.kernel;
                                 d["n_elem"] = r.n_elem;
                                 py::list ranks;
                                 for (const rt::LaunchResult& l : r.ranks) ranks.append(launch_dict(l));
                                 d["ranks"] = ranks;
                                 out.append(d);
                               }
                               return out;
                             })
      .def_property_readonly("device_state",
                             [](const Call& c) {
                               py::dict d;
                               d["device"] = c.device.device;
                               d["cubes_per_sip"] = c.device.cubes_per_sip;
                               d["pes_per_cube"] = c.device.pes_per_cube;
                               d["now_ps"] = c.device.now;
                               return d;
                             })
      .def_property_readonly("group_state",
                             [](const Call& c) {
                               py::dict d;
                               d["initialized"] = c.group.initialized;
                               d["rank"] = c.group.rank;
                               d["world_size"] = c.group.world_size;
                               return d;
                             })
      .def_property_readonly("text", [](const Call& c) { return c.text; });
  bind_runtime_calls(call);
  bind_other_calls(call);
  bind_bench_calls(call);

  py::class_<Event>(m, "Event")
      .def_property_readonly("kind", [](const Event& e) { return static_cast<int>(e.kind); })
      .def_readonly("executor", &Event::executor)
      .def_readonly("code", &Event::code)
      .def_readonly("message", &Event::message);
  py::class_<Channel, std::shared_ptr<Channel>>(m, "Channel")
      .def(py::init<>())
      .def("start", &Channel::start)
      .def(
          "order",
          [](Channel& s, int kind, int executor, const CallPtr& call, std::string message, int code) {
            return s.order(Order{static_cast<Order::Kind>(kind), executor, call, std::move(message), code});
          },
          py::arg("kind"), py::arg("executor"), py::arg("call") = nullptr, py::arg("message") = "", py::arg("code") = 0)
      .def("abandon", &Channel::abandon, py::arg("message"), py::arg("code"))
      .def("unanswered", &Channel::unanswered)
      .def_property_readonly("ended", &Channel::ended);
  m.def("_register_errors", &register_errors, py::arg("types"));
  m.def(
      "dtype_size", [](const std::string& dtype) { return dtype_size(dtype_of(dtype)); }, py::arg("dtype"));
  m.def(
      "sip_neighbors",
      [](const std::string& topology, unsigned sip_w, unsigned sip_h, unsigned world, unsigned rank) {
        if (sip_w < 1 || sip_h < 1 || rank >= world)
          throw py::value_error("sip_neighbors: the SIP grid is at least 1 x 1 and the rank is below the world size");
        ccl::SystemShape s;
        s.sips = sip_w * sip_h;
        s.sip_w = sip_w;
        s.sip_h = sip_h;
        const auto* names = std::begin(ccl::kSipTopologyNames);
        const auto* it = std::find(names, std::end(ccl::kSipTopologyNames), topology);
        if (it == std::end(ccl::kSipTopologyNames)) throw py::value_error("unknown SIP topology '" + topology + "'");
        s.topology = static_cast<ccl::SipTopology>(it - names);
        return ccl::sip_neighbors(s, world, rank);
      },
      py::arg("topology"), py::arg("sip_w"), py::arg("sip_h"), py::arg("world"), py::arg("rank"));
  m.attr("DRIVER") = kDriver;
  for (const auto& [name, value] : {std::pair<const char*, int>{"EVENT_DONE", Event::kDone},
                                    {"EVENT_START", Event::kStart},
                                    {"EVENT_CANCELLED", Event::kCancelled},
                                    {"EVENT_ENDED", Event::kEnded},
                                    {"ORDER_CALL", Order::kCall},
                                    {"ORDER_RETURN", Order::kReturn},
                                    {"ORDER_RAISE", Order::kRaise},
                                    {"ORDER_ACK", Order::kAck},
                                    {"ORDER_CLOSE", Order::kClose}})
    m.attr(name) = value;
}

}  // namespace kbsim::python

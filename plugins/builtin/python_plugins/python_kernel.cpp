#include "python_kernel.hpp"

#include <pybind11/stl.h>

#include <deque>
#include <utility>
#include <vector>

#include "channel.hpp"

namespace py = pybind11;

namespace kbsim::python {

namespace {

using TlCallPtr = std::shared_ptr<TlCall>;

TlCallPtr make(std::function<void(tl::Program&, TlCall&)> work) {
  auto c = std::make_shared<TlCall>();
  c->work = std::move(work);
  return c;
}

tl::MathOp math_op_of(const std::string& name) {
  for (int i = 0; i <= static_cast<int>(tl::MathOp::kScale); ++i)
    if (tl::math_op_name(static_cast<tl::MathOp>(i)) == name) return static_cast<tl::MathOp>(i);
  throw py::value_error("unknown math op '" + name + "'");
}

tl::Space space_of(const std::string& name) {
  if (name == "hbm") return tl::Space::kHbm;
  if (name == "tcm") return tl::Space::kTcm;
  if (name == "sram") return tl::Space::kSram;
  throw py::value_error("unknown space '" + name + "' (hbm, tcm, sram)");
}

py::tuple dims(const Shape& s) {
  py::tuple t(s.rank());
  for (std::size_t i = 0; i < s.rank(); ++i) t[i] = s[i];
  return t;
}

/// The kernel's arguments as Python sees them: TensorArg, int or float.
py::list args_list(const tl::Args& args) {
  py::list out;
  for (const tl::Args::Value& v : args.values()) std::visit([&](const auto& x) { out.append(py::cast(x)); }, v);
  return out;
}

/// Greenlets of kernels that ended on an error, kept: ending one runs Python code, which must not run on the
/// kernel's fiber (where the error unwinds); a failed kernel fails its run, so they are few.
std::deque<py::object>& kept_greenlets() {
  static auto* kept = new std::deque<py::object>();
  return *kept;
}

void run(const std::string& file, const std::string& name, tl::Program& tl, const tl::Args& args) {
  py::object state;    // kbsim._plugins' kernel run (its greenlet), touched with the lock, on the simulation's stack
  TlCallPtr call;      // the call just made (none before the first step)
  std::string misuse;  // what the call just made threw (tl::Error): raised in the kernel, at its line
  std::string error;
  bool done = false;
  auto step = [&] {
    const PythonLock gil;
    try {
      if (!state) state = py::module_::import("kbsim._plugins").attr("start_kernel")(file, name, args_list(args));
      py::object next = misuse.empty() ? state.attr("step")(call ? py::cast(call) : py::none())
                                       : state.attr("fail")(std::exchange(misuse, {}));
      call.reset();
      if (next.is_none()) {
        done = true;
        state = py::object();
        return;
      }
      call = next.cast<TlCallPtr>();
    } catch (py::error_already_set& e) {
      error = py::str(e.value()).cast<std::string>();
      done = true;
      state = py::object();
    }
  };
  const std::function<void()> python_step = [&] { on_python_stack(step); };
  try {
    for (;;) {
      tl.outside(python_step);
      if (done) break;
      try {
        call->work(tl, *call);
      } catch (const tl::Error& e) {  // a misuse of the API (a bad shape, a pending value read): the kernel's line
        misuse = e.what();
      }
    }
  } catch (...) {
    if (state) kept_greenlets().push_back(std::move(state));  // (a move: no Python code runs here)
    throw;
  }
  if (!error.empty()) throw tl::Error(error);
}

}  // namespace

tl::KernelFn python_kernel(std::string file, std::string name) {
  return [file = std::move(file), name = std::move(name)](tl::Program& tl, const tl::Args& args) {
    run(file, name, tl, args);
  };
}

void bind_tl(py::module_& m) {
  py::class_<tl::Tensor>(m, "TlTensor")
      .def_property_readonly("shape", [](const tl::Tensor& t) { return dims(t.shape()); })
      .def_property_readonly("dtype", [](const tl::Tensor& t) { return std::string(dtype_name(t.dtype())); })
      .def_property_readonly("addr", &tl::Tensor::addr)
      .def_property_readonly("space", [](const tl::Tensor& t) { return std::string(tl::space_name(t.space())); })
      .def_property_readonly("pending", &tl::Tensor::pending)
      .def_property_readonly("pinned", &tl::Tensor::pinned)
      .def_property_readonly("nbytes", &tl::Tensor::nbytes)
      .def("item", [](const tl::Tensor& t, std::int64_t i) { return t.item(i); });
  py::class_<tl::TensorArg>(m, "TensorArg")
      .def_readonly("ptr", &tl::TensorArg::ptr)
      .def_property_readonly("shape", [](const tl::TensorArg& t) { return dims(t.shape); })
      .def_property_readonly("dtype", [](const tl::TensorArg& t) { return std::string(dtype_name(t.dtype)); })
      .def("shard", [](const tl::TensorArg& t, unsigned cube, unsigned pe) -> py::object {
        const tl::TensorArg::Shard* s = t.shard(cube, pe);
        if (!s) return py::none();
        py::dict d;
        d["ptr"] = s->ptr;
        d["offset_bytes"] = s->offset_bytes;
        d["nbytes"] = s->nbytes;
        d["shape"] = dims(s->shape);
        return d;
      });
  using T = const tl::Tensor&;
  py::class_<TlCall, TlCallPtr>(m, "TlCall")
      .def_property_readonly("tensor", [](const TlCall& c) { return c.tensor; })
      .def_property_readonly("handle", [](const TlCall& c) { return c.handle.id; })
      .def_property_readonly("future", [](const TlCall& c) { return c.future.id; })
      .def_property_readonly("value", [](const TlCall& c) { return c.value; })
      .def_static("program_id",
                  [](int axis) { return make([axis](tl::Program& tl, TlCall& c) { c.value = tl.program_id(axis); }); })
      .def_static(
          "num_programs",
          [](int axis) { return make([axis](tl::Program& tl, TlCall& c) { c.value = tl.num_programs(axis); }); })
      .def_static(
          "load",
          [](std::uint64_t ptr, const std::vector<std::int64_t>& shape, const std::string& dtype,
             std::uint64_t row_stride) {
            return make([ptr, s = shape_of(shape), t = dtype_of(dtype), row_stride](tl::Program& tl, TlCall& c) {
              c.tensor = row_stride == 0 ? tl.load(ptr, s, t) : tl.load(ptr, s, t, row_stride);
            });
          })
      .def_static("ref",
                  [](std::uint64_t ptr, const std::vector<std::int64_t>& shape, const std::string& dtype) {
                    return make([ptr, s = shape_of(shape), t = dtype_of(dtype)](tl::Program& tl, TlCall& c) {
                      c.tensor = tl.ref(ptr, s, t);
                    });
                  })
      .def_static("store",
                  [](std::uint64_t ptr, T value, std::uint64_t row_stride) {
                    return make([ptr, value, row_stride](tl::Program& tl, TlCall&) {
                      if (row_stride == 0)
                        tl.store(ptr, value);
                      else
                        tl.store(ptr, value, row_stride);
                    });
                  })
      .def_static("dot", [](T a, T b) { return make([a, b](tl::Program& tl, TlCall& c) { c.tensor = tl.dot(a, b); }); })
      .def_static("math",
                  [](const std::string& op, std::vector<tl::Tensor> inputs, int axis) {
                    return make([o = math_op_of(op), inputs = std::move(inputs), axis](tl::Program& tl, TlCall& c) {
                      c.tensor = tl.math(o, inputs, axis);
                    });
                  })
      .def_static(
          "composite_gemm",
          [](T a, T b, std::uint64_t out_ptr, const std::string& out_dtype,
             const std::vector<std::tuple<std::string, std::string, double, py::object>>& epilogue,
             const std::vector<std::uint32_t>& tiles) {
            tl::CompositeSpec spec;
            spec.op = tl::CompositeSpec::Op::kGemm;
            spec.a = a;
            spec.b = b;
            spec.out_ptr = out_ptr;
            spec.out_dtype = dtype_of(out_dtype);
            for (const auto& [op, scope, factor, operand] : epilogue) {
              if (scope != "output_tile" && scope != "k_tile")
                throw py::value_error("an epilogue's scope is output_tile or k_tile, not '" + scope + "'");
              spec.epilogue.push_back({math_op_of(op), scope == "k_tile" ? tl::Scope::kKTile : tl::Scope::kOutputTile,
                                       factor, operand.is_none() ? tl::Tensor() : operand.cast<tl::Tensor>()});
            }
            if (tiles.size() == 3) {
              spec.tile_m = tiles[0];
              spec.tile_k = tiles[1];
              spec.tile_n = tiles[2];
            } else if (!tiles.empty()) {
              throw py::value_error("tiles are (m, k, n)");
            }
            return make([spec](tl::Program& tl, TlCall& c) { c.handle = tl.composite(spec); });
          })
      .def_static("composite_math",
                  [](const std::string& op, T a, std::uint64_t out_ptr, const std::string& out_dtype) {
                    tl::CompositeSpec spec;
                    spec.op = tl::CompositeSpec::Op::kMath;
                    spec.math_op = math_op_of(op);
                    spec.a = a;
                    spec.out_ptr = out_ptr;
                    spec.out_dtype = dtype_of(out_dtype);
                    return make([spec](tl::Program& tl, TlCall& c) { c.handle = tl.composite(spec); });
                  })
      .def_static("send",
                  [](std::string dir, T src) {
                    return make([dir = std::move(dir), src](tl::Program& tl, TlCall&) { tl.send(dir, src); });
                  })
      .def_static("send_raw",
                  [](std::string dir, std::uint64_t addr, const std::vector<std::int64_t>& shape,
                     const std::string& dtype, const std::string& space) {
                    return make([dir = std::move(dir), addr, s = shape_of(shape), t = dtype_of(dtype),
                                 sp = space_of(space)](tl::Program& tl, TlCall&) { tl.send(dir, addr, s, t, sp); });
                  })
      .def_static("recv",
                  [](std::string dir, const std::vector<std::int64_t>& shape, const std::string& dtype) {
                    return make([dir = std::move(dir), s = shape_of(shape), t = dtype_of(dtype)](
                                    tl::Program& tl, TlCall& c) { c.tensor = tl.recv(dir, s, t); });
                  })
      .def_static(
          "recv_to",
          [](std::string dir, const std::vector<std::int64_t>& shape, const std::string& dtype, std::uint64_t dst,
             const std::string& space) {
            return make([dir = std::move(dir), s = shape_of(shape), t = dtype_of(dtype), dst, sp = space_of(space)](
                            tl::Program& tl, TlCall& c) { c.tensor = tl.recv(dir, s, t, dst, sp); });
          })
      .def_static("recv_async",
                  [](std::string dir, const std::vector<std::int64_t>& shape, const std::string& dtype) {
                    return make([dir = std::move(dir), s = shape_of(shape), t = dtype_of(dtype)](
                                    tl::Program& tl, TlCall& c) { c.future = tl.recv_async(dir, s, t); });
                  })
      .def_static("wait_future",
                  [](std::uint64_t id) {
                    return make([id](tl::Program& tl, TlCall& c) { c.tensor = tl.wait(tl::RecvFuture{id}); });
                  })
      .def_static("wait_handle",
                  [](std::uint64_t id) { return make([id](tl::Program& tl, TlCall&) { tl.wait(tl::Handle{id}); }); })
      .def_static("wait_all", [] { return make([](tl::Program& tl, TlCall&) { tl.wait(); }); })
      .def_static("recv_no_consume",
                  [](std::string dir, const std::vector<std::int64_t>& shape, const std::string& dtype) {
                    return make([dir = std::move(dir), s = shape_of(shape), t = dtype_of(dtype)](
                                    tl::Program& tl, TlCall&) { tl.recv_no_consume(dir, s, t); });
                  })
      .def_static(
          "phase",
          [](std::string name) { return make([name = std::move(name)](tl::Program& tl, TlCall&) { tl.phase(name); }); })
      .def_static("cycles", [](std::uint64_t n) { return make([n](tl::Program& tl, TlCall&) { tl.cycles(n); }); })
      .def_static("full",
                  [](const std::vector<std::int64_t>& shape, double value, const std::string& dtype) {
                    return make([s = shape_of(shape), value, t = dtype_of(dtype)](tl::Program& tl, TlCall& c) {
                      c.tensor = tl.full(s, value, t);
                    });
                  })
      .def_static("arange",
                  [](std::int64_t start, std::int64_t end, const std::string& dtype) {
                    return make([start, end, t = dtype_of(dtype)](tl::Program& tl, TlCall& c) {
                      c.tensor = tl.arange(start, end, t);
                    });
                  })
      .def_static("trans", [](T x) { return make([x](tl::Program& tl, TlCall& c) { c.tensor = tl.trans(x); }); })
      .def_static("free", [](T x) { return make([x](tl::Program& tl, TlCall&) { tl.free(x); }); })
      .def_static("reshape", [](T x, const std::vector<std::int64_t>& shape) {
        return make([x, s = shape_of(shape)](tl::Program& tl, TlCall& c) { c.tensor = tl.reshape(x, s); });
      });
}

}  // namespace kbsim::python

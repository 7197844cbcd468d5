// Data-operation records: the generic half of the two-pass model.
//
// A message declares itself a data operation (Message::data_op, set by its
// constructor) and describes the operation in describe_op(). When a run keeps
// an op log, the core records an OpRecord around a component's service of
// such a message: from its delivery (or the moment a shared resource the
// component asked for with it is granted, Simulator::op_resume) to the moment
// that component sends it on. Components never log themselves, so a vendor's
// component is logged like a built-in one. What a record means (its kind, its
// payload) is the model's business: the core only times and orders records.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "kbsim/bytes.hpp"
#include "kbsim/time.hpp"

namespace kbsim {

using NodeIndex = std::uint32_t;

/// One parameter of a record, for reports and traces.
struct OpParam {
  std::string key;
  std::variant<std::int64_t, double, std::string> value;
};

/// What a model attaches to a record for its own later use (e.g. the data
/// pass's description of what to compute). The core never looks inside, but a
/// run split over processes carries records to every process: a payload type
/// that can cross says its name and saves itself, and a plugin registers its
/// loader with add_payload<T> (kbsim/plugin.hpp).
class OpPayload {
 public:
  virtual ~OpPayload() = default;
  /// The registered name of this payload type; empty: it cannot cross between processes.
  virtual std::string_view payload_name() const noexcept { return {}; }
  virtual void save(ByteWriter& w) const { (void)w; }
};

/// How to make a payload of one type from its bytes: the data of an extension of kind kPayloadKind, named by the
/// type's payload_name().
struct OpPayloadType {
  static constexpr std::string_view kPayloadKind = "op_payload";
  std::shared_ptr<const OpPayload> (*load)(ByteReader& r);
};

/// One logged data operation.
struct OpRecord {
  std::uint64_t seq = 0;  ///< position in completion order; ties in t_start keep it
  Tick t_start = 0, t_end = 0;
  NodeIndex component = 0;
  std::string_view component_id;  ///< the node's id (valid while the simulation lives)
  /// A short class name chosen by the model ("memory", "gemm", ...); must
  /// point at storage that outlives the run (a string literal).
  std::string_view kind = "unknown";
  std::string name;  ///< e.g. "dma_read", "gemm_f16", "TileToken/GEMM"
  std::vector<OpParam> params;
  std::vector<std::uint64_t> dependency_ids;  ///< explicit ordering the addresses cannot express (seq values)
  std::shared_ptr<const OpPayload> data;      ///< the model's payload; none = timeline only
  std::uint64_t flow = 0;                     ///< records of one flow (e.g. one tile) share it (0 = none)
  bool flow_end = false;                      ///< the flow's last record

  template <class V>
  void param(std::string key, V v) {
    if constexpr (std::is_same_v<V, bool>)
      params.push_back({std::move(key), std::int64_t{v}});
    else if constexpr (std::is_integral_v<V>)
      params.push_back({std::move(key), static_cast<std::int64_t>(v)});
    else if constexpr (std::is_floating_point_v<V>)
      params.push_back({std::move(key), static_cast<double>(v)});
    else
      params.push_back({std::move(key), std::string(v)});
  }
};

/// The op log of a system, as a run observer sees it.
class OpLogView {
 public:
  /// Kept records in completion (seq) order; empty unless some observer keeps records.
  virtual const std::vector<OpRecord>& records() const noexcept = 0;
  /// Kept records in stable t_start order.
  virtual std::vector<const OpRecord*> by_start() const = 0;
  /// The earliest start of a record still open, or kNever: every record
  /// starting before it is complete.
  virtual Tick watermark() const noexcept = 0;
  /// Push a record that is not around a service (e.g. a host write); its seq
  /// is assigned here and it goes to every observer like the others.
  virtual void record(OpRecord r) = 0;

 protected:
  ~OpLogView() = default;
};

}  // namespace kbsim

// The ranks of an mpirun job as the transport of split systems (split.hpp): one MPI all-to-all per exchange
// (cluster/world.hpp).
#pragma once

#include <string>
#include <vector>

#include "cluster/world.hpp"
#include "split/split.hpp"

namespace kbsim::core {

class ClusterTransport final : public Transport {
 public:
  void exchange(const std::vector<std::string>& to_rank, Tick next, Exchanged& in) override {
    in.next = cluster::all_to_all(to_rank, next, in.from_rank);
  }
};

}  // namespace kbsim::core

#include "component/services.hpp"

#include "kbsim/errors.hpp"
#include "plugin/registry.hpp"

namespace kbsim::core {

Service* ServiceBoard::find(std::string_view name, const Registry& registry, System& system, Simulator& sim) {
  for (const auto& [n, svc] : named_)
    if (n == name) return svc;
  Service* made = nullptr;
  if (const ServiceType* type = registry.service(name)) {
    made_.emplace_back(type->create(system, sim));
    made = made_.back().get();
    if (!made) made_.pop_back();  // the provider declined: not available on this system
  }
  named_.emplace_back(std::string(name), made);
  return made;
}

void ServiceBoard::provide(std::string_view name, Service& service) {
  for (auto& [n, svc] : named_)
    if (n == name) {
      if (svc) throw Error("service '" + std::string(name) + "' is already in use on this system");
      svc = &service;  // asked for before, when nobody provided it
      return;
    }
  named_.emplace_back(std::string(name), &service);
}

std::vector<std::pair<std::string, ReplicatedService*>> ServiceBoard::replicated() const {
  std::vector<std::pair<std::string, ReplicatedService*>> out;
  for (const auto& [name, svc] : named_)
    if (auto* r = dynamic_cast<ReplicatedService*>(svc)) out.emplace_back(name, r);
  for (std::size_t k = 0; k < shared_.size(); ++k) out.emplace_back("the bench's #" + std::to_string(k), shared_[k]);
  return out;
}

void ServiceBoard::finish() {
  if (finished_) return;
  finished_ = true;
  // Newest first; a service made while others finish (say, by a component the host runtime's wait runs) finishes
  // too. Indices, not iterators: making one may grow the vector.
  for (std::size_t finished = 0; finished < made_.size();) {
    const std::size_t n = made_.size();
    for (std::size_t i = n; i-- > finished;) made_[i]->finish();
    finished = n;
  }
}

void ServiceBoard::clear() noexcept {
  while (!made_.empty()) made_.pop_back();
}

}  // namespace kbsim::core

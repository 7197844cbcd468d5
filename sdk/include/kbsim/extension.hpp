// Extensions: registrations that belong to a model kit, not to the core.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kbsim/params.hpp"

namespace kbsim {

/// A registration whose meaning belongs to a model kit, not to the core: the
/// core keeps, lists (`kbsim list KIND`s) and hands them to whoever asks for
/// that kind (System::extensions). tl kernels are extensions of kind "kernel";
/// the PE kit's collective algorithms are extensions too.
struct Extension {
  std::string kind;
  std::string name;
  std::string summary;
  std::shared_ptr<const void> data;  ///< what the kind's consumer knows how to read
  /// Its own parameters, for a kind a configuration section configures (kbsim/config_section.hpp): each
  /// registered extension of that kind has an entry there. `kbsim info NAME` lists them.
  std::vector<ParamSpec> params = {};
  /// Lines `kbsim info NAME` adds ("buffer kinds: tcm, sram").
  std::vector<std::string> details = {};
};

}  // namespace kbsim

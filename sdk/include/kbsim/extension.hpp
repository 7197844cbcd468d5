// Extensions: registrations that belong to a model kit, not to the core.
#pragma once

#include <memory>
#include <string>

namespace kbsim {

/// A registration whose meaning belongs to a model kit, not to the core: the
/// core keeps, lists (`kbsim list KIND`s) and hands them to whoever asks for
/// that kind (System::extensions). tl kernels are extensions of kind "kernel".
struct Extension {
  std::string kind;
  std::string name;
  std::string summary;
  std::shared_ptr<const void> data;  ///< what the kind's consumer knows how to read
};

}  // namespace kbsim

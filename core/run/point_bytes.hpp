// A sweep point's record as bytes, to travel from a worker process or another
// process of the job: decode(encode(r)) is r, metrics trees and all.
#pragma once

#include <string>
#include <string_view>

#include "report/run_record.hpp"

namespace kbsim::core {

std::string encode(const PointRecord& r);
PointRecord decode(std::string_view bytes);

}  // namespace kbsim::core

// Small text helpers shared by the loaders: "did you mean" suggestions and lists.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kbsim::core {

/// Up to `max` candidates closest to `word` by edit distance (closest first,
/// ties in input order), only those within a plausible distance.
std::vector<std::string> closest(std::string_view word, const std::vector<std::string>& candidates,
                                 std::size_t max = 3);

/// " (closest: a, b)" or " (known: a, b, c)" when nothing is close; "" when there are no candidates.
std::string suggest(std::string_view word, const std::vector<std::string>& candidates);

std::string join(const std::vector<std::string>& items, std::string_view sep = ", ");

/// A number of nanoseconds printed without trailing zeros ("545", "1.25").
std::string format_ns(double ns);

}  // namespace kbsim::core

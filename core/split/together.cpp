// How ranks tell each other what they do and leave together (said.hpp, split.hpp).
#include "kbsim/text.hpp"
#include "split/said.hpp"
#include "split/split.hpp"

namespace kbsim::core {

namespace said {

std::string coded(char kind, ExitCode code, const std::string& what, bool named) {
  std::string out(1, kind);
  ByteWriter w(out);
  w.put(static_cast<std::int32_t>(code));
  w.put(named);
  w.put_string(what);
  return out;
}

Said read(const std::string& in, unsigned rank, unsigned ranks) {
  ByteReader r(std::string_view(in).substr(1));
  Said s{static_cast<ExitCode>(r.get<std::int32_t>()), {}, {}};
  const bool named = r.get<bool>();
  s.words = r.get_string();
  s.named = named ? s.words : "rank " + std::to_string(rank) + " of " + std::to_string(ranks) + ": " + s.words;
  return s;
}

void end_if_failed(const std::vector<std::string>& from_rank, unsigned me, char kind) {
  const auto ranks = static_cast<unsigned>(from_rank.size());
  auto what = [](const std::string& in) { return in.empty() ? kFine : in[0]; };
  for (unsigned rank = 0; rank < ranks; ++rank) {
    const char got = what(from_rank[rank]);
    if (got != kFailed && got != kLeft) continue;
    const Said s = read(from_rank[rank], rank, ranks);
    if (s.code == ExitCode::kInterrupted) throw BenchError("INTERRUPTED", s.words);
    if (s.code != ExitCode::kOk) throw RankError(s.code, s.named);
  }
  auto doing = [](char k) {
    return k == kLeft                    ? "finished its bench"
           : k == kFine || k == kStopped ? "runs its system"
           : k == kGathered              ? "ended a run"
                                         : "asks what components wait for";
  };
  auto same = [](char a, char b) { return a == b || ((a == kFine || a == kStopped) && (b == kFine || b == kStopped)); };
  for (unsigned rank = 0; rank < ranks; ++rank)
    if (const char got = what(from_rank[rank]); !same(got, kind))
      throw SimError("rank " + std::to_string(me) + " of " + std::to_string(ranks) +
                     ": the ranks' benches went different ways: rank " + std::to_string(rank) + " " + doing(got) +
                     " while this one " + doing(kind) + " (a bench must do the same on every rank, docs/scale-out.md)");
}

}  // namespace said

std::optional<RankError> leave_split(Transport& transport, unsigned rank, unsigned ranks, ExitCode code,
                                     const std::string& what, bool named) {
  std::optional<RankError> other;
  for (;;) {
    const Transport::Exchanged in =
        transport.exchange(std::vector<std::string>(ranks, said::coded(said::kLeft, code, what, named)), kNever);
    bool all = true;
    for (unsigned r = 0; r < ranks; ++r) {
      const std::string& got = in.from_rank[r];
      if (got.empty() || got[0] != said::kLeft) {
        all = false;  // still running: it learns of this at its exchange, and leaves next
        continue;
      }
      const said::Said s = said::read(got, r, ranks);
      if (r != rank && s.code != ExitCode::kOk && code == ExitCode::kOk && !other) other.emplace(s.code, s.named);
    }
    if (all) return other;
  }
}

void run_together(Transport& transport, unsigned rank, unsigned ranks, const std::function<void()>& work) {
  try {
    work();
  } catch (const std::exception& e) {
    const auto* error = dynamic_cast<const Error*>(&e);
    leave_split(transport, rank, ranks, error ? error->code() : ExitCode::kInternal, one_line(e.what()),
                dynamic_cast<const RankError*>(&e) != nullptr);
    throw;
  }
  if (auto other = leave_split(transport, rank, ranks, ExitCode::kOk, "", false)) throw *other;
}

}  // namespace kbsim::core

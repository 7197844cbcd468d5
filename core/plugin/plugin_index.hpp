// The plugin index: what each library of a plugin directory provides, kept in a
// file beside the libraries, so that a run loads only the libraries it uses
// (loading all of them costs a few milliseconds, most of a short run). The build
// writes it for <build>/plugins (`kbsim list --write-index DIR` writes one for any
// directory). A library is trusted to the index only while its size and
// modification time are the ones the index recorded; any other library of the
// directory (new, rebuilt, replaced) is loaded at discovery as if there were no
// index. An index of another plugin ABI, or one that cannot be read, is ignored.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "kbsim/plugin.hpp"

namespace kbsim::core {

/// The file name of the index in a plugin directory.
inline constexpr const char* kPluginIndexFile = "kbsim-plugins.index";

enum class OfferKind : std::uint8_t {
  kComponent,
  kBench,
  kSection,
  kCommand,
  kObserver,
  kService,
  kFrontEnd,
  kExtension,
  kMessage
};

/// One name a library provides. An extension is (its kind, its name); a message type is (its type id in 16 hex
/// digits, its name); any other offer has only a name.
struct Offer {
  OfferKind kind;
  std::string name;
  std::string detail;
  bool operator==(const Offer&) const = default;
};

/// A file's size and modification time (nanoseconds), as the index records them.
struct FileStamp {
  std::uintmax_t size = 0;
  std::int64_t mtime_ns = 0;
  bool operator==(const FileStamp&) const = default;
};

struct IndexedLibrary {
  std::string file;  ///< its file name in the directory
  FileStamp stamp;
  std::vector<Offer> offers;
};

/// Everything `plugin` provides.
std::vector<Offer> offers_of(const PluginDescriptor& plugin);
/// The type id of a message type as an offer names it.
std::string message_offer_name(TypeId type);
/// The stamp of `file` into `out`; false when it cannot be read.
bool file_stamp(const std::filesystem::path& file, FileStamp& out);

/// The records of `dir`'s index, or none when it has no index, or one that is malformed or of another plugin ABI
/// (a debug line says why).
std::vector<IndexedLibrary> read_plugin_index(const std::filesystem::path& dir);
/// Write `dir`'s index (whole or not at all: a temporary file renamed into place). Throws PluginError if it cannot
/// be written or a name cannot be written into it.
void write_plugin_index(const std::filesystem::path& dir, const std::vector<IndexedLibrary>& libraries);

}  // namespace kbsim::core

// Finding plugin libraries and loading them: at discovery, or on first use for
// a library the directory's index describes (plugin_index.hpp).
#include <dlfcn.h>
#include <elf.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/dll/shared_library.hpp>
#include <cstring>
#include <fstream>
#include <set>

#include "plugin/registry.hpp"

namespace fs = std::filesystem;

namespace kbsim::core {

struct Registry::Library {
  boost::dll::shared_library lib;
};

Registry::Registry() = default;

Registry::~Registry() {
  // Types point into the libraries' descriptors: forget them before unloading.
  components_.clear();
  benches_.clear();
  sections_.clear();
  commands_.clear();
  observers_.clear();
  services_.clear();
  frontends_.clear();
  extensions_.clear();
  libraries_.clear();
}

std::string library_name(const fs::path& file) {
  std::string stem = file.filename().string();
  if (auto dot = stem.find(".so"); dot != std::string::npos) stem.resize(dot);
  if (stem.rfind("lib", 0) == 0) stem.erase(0, 3);
  return stem;
}

void Registry::add_search_dir(const fs::path& dir, bool must_exist) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    if (must_exist) throw PluginError(dir.string() + ": plugin directory does not exist");
    return;
  }
  dirs_.push_back(fs::weakly_canonical(dir, ec));
}

void Registry::discover(bool use_index) {
  std::set<std::string> seen;
  for (const auto& l : library_list_) seen.insert(l.name);
  for (const auto& p : pending_) seen.insert(p.name);
  struct Found {
    std::map<std::string, IndexedLibrary> index;
    std::vector<fs::path> others;  ///< files that are not libraries: plugin files if a loader takes their suffix
  };
  std::vector<Found> found(dirs_.size());
  auto from_index = [&](Found& d, const fs::path& f) -> std::vector<Offer>* {
    FileStamp stamp;
    auto it = d.index.find(f.filename().string());
    return it != d.index.end() && file_stamp(f, stamp) && stamp == it->second.stamp ? &it->second.offers : nullptr;
  };
  for (std::size_t k = 0; k < dirs_.size(); ++k) {
    const fs::path& dir = dirs_[k];
    std::vector<fs::path> files;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      const fs::path& p = entry.path();
      const std::string name = p.filename().string();
      const bool library = name.ends_with(".so") || name.find(".so.") != std::string::npos;  // (libx.so.1)
      if (!library && (name.empty() || name[0] == '_' || name[0] == '.')) continue;          // a plugin file's helper
      std::error_code bad;
      if (entry.is_regular_file(bad)) (library ? files : found[k].others).push_back(p);
      if (bad && library) throw PluginError(p.string() + ": cannot load library: " + bad.message());
    }
    if (ec) throw PluginError(dir.string() + ": plugin directory cannot be read: " + ec.message());
    std::sort(files.begin(), files.end());
    std::sort(found[k].others.begin(), found[k].others.end());
    if (use_index)
      for (IndexedLibrary& lib : read_plugin_index(dir)) found[k].index.emplace(lib.file, std::move(lib));
    for (const fs::path& f : files) {
      if (!seen.insert(library_name(f)).second) {
        spdlog::debug("plugin {} shadowed by an earlier directory", f.string());
        continue;
      }
      if (std::vector<Offer>* offers = from_index(found[k], f))
        add_pending(f, std::move(*offers), false);
      else
        load_library(f);
    }
  }
  const std::vector<std::string> suffixes = loader_suffixes();
  for (Found& d : found)
    for (const fs::path& f : d.others) {
      const std::string suffix = f.extension().string();
      if (suffix.size() < 2 || std::find(suffixes.begin(), suffixes.end(), suffix.substr(1)) == suffixes.end())
        continue;
      if (!seen.insert(library_name(f)).second) {
        spdlog::debug("plugin file {} shadowed by an earlier directory", f.string());
        continue;
      }
      try {
        if (std::vector<Offer>* offers = from_index(d, f))
          add_pending(f, std::move(*offers), true);
        else
          load_plugin_file(f);
      } catch (const PluginError& e) {
        if (!tolerant_) throw;
        broken_.emplace_back(e.what());
      }
    }
}

std::vector<std::string> Registry::loader_suffixes() const {
  const std::string kind(PluginFileLoader::kKind);
  std::vector<std::string> out;
  for (const auto& [key, entry] : extensions_)
    if (key.first == kind) out.push_back(key.second);
  for (const Pending& p : pending_)
    for (const Offer& o : p.offers)
      if (o.kind == OfferKind::kExtension && o.name == kind) out.push_back(o.detail);
  return out;
}

namespace {
/// How an error names an offer's kind.
std::string kind_words(const Offer& o) {
  switch (o.kind) {
    case OfferKind::kComponent: return "component type";
    case OfferKind::kBench: return "bench";
    case OfferKind::kSection: return "configuration section";
    case OfferKind::kCommand: return "command";
    case OfferKind::kObserver: return "run observer";
    case OfferKind::kService: return "service";
    case OfferKind::kFrontEnd: return "topology front-end";
    case OfferKind::kExtension: return o.name;
    case OfferKind::kMessage: return "message type";
  }
  return "name";
}
}  // namespace

void Registry::check_offers(const fs::path& file, const std::vector<Offer>& offers, bool against_loaded) const {
  auto loaded_provider = [&](const Offer& o) -> std::string {
    auto in = [&](const auto& map, const auto& key) {
      auto it = map.find(key);
      return it == map.end() ? std::string() : it->second.from.path;
    };
    switch (o.kind) {
      case OfferKind::kComponent: return in(components_, o.name);
      case OfferKind::kBench: return in(benches_, o.name);
      case OfferKind::kSection: return in(sections_, o.name);
      case OfferKind::kCommand: return in(commands_, o.name);
      case OfferKind::kObserver: return in(observers_, o.name);
      case OfferKind::kService: return in(services_, o.name);
      case OfferKind::kFrontEnd: return in(frontends_, o.name);
      case OfferKind::kExtension: return in(extensions_, std::make_pair(o.name, o.detail));
      case OfferKind::kMessage: return {};
    }
    return {};
  };
  auto others = [&](auto&& visit) {  // the libraries found and not loaded, this one aside
    for (const Pending& p : pending_)
      if (!p.loaded && p.file != file)
        for (const Offer& q : p.offers) visit(p, q);
  };
  for (const Offer& o : offers) {
    if (o.kind == OfferKind::kMessage) {  // one type in many libraries is fine; one id for two names is not
      auto clash = [&](const std::string& other_name, const std::string& other_path) {
        throw PluginError(file.string() + ": message type '" + o.detail + "' has the type id of '" + other_name +
                          "' (from " + other_path + "): rename one");
      };
      if (against_loaded)
        for (const auto& [id, entry] : messages_)
          if (message_offer_name(id) == o.name && entry.type->name != o.detail)
            clash(std::string(entry.type->name), entry.from.path);
      others([&](const Pending& p, const Offer& q) {
        if (q.kind == OfferKind::kMessage && q.name == o.name && q.detail != o.detail) clash(q.detail, p.file);
      });
      continue;
    }
    std::string other = against_loaded ? loaded_provider(o) : std::string();
    others([&](const Pending& p, const Offer& q) {
      if (other.empty() && q == o) other = p.file.string();
    });
    if (!other.empty())
      throw PluginError(file.string() + ": " + kind_words(o) + " '" +
                        (o.kind == OfferKind::kExtension ? o.detail : o.name) + "' is already provided by " + other);
  }
}

void Registry::add_pending(const fs::path& file, std::vector<Offer> offers, bool by_loader) {
  check_offers(file, offers, true);  // the checks loading makes, so a clash is found at discovery either way
  pending_.push_back({file, library_name(file), std::move(offers), false, by_loader});
}

void Registry::load_pending(const std::function<bool(const Offer&)>& want, bool first_only) const {
  // Loading on first use fills a cache: the registry is logically unchanged, and none is ever made const.
  auto& self = const_cast<Registry&>(*this);
  for (std::size_t i = 0; i < self.pending_.size(); ++i) {
    Pending& p = self.pending_[i];
    if (p.loaded || std::none_of(p.offers.begin(), p.offers.end(), want)) continue;
    p.loaded = true;  // (a library that fails to load is not tried again)
    spdlog::debug("loading plugin {} on first use", p.file.string());
    if (!p.by_loader) {
      self.load_library(p.file);
    } else if (first_only) {
      self.load_plugin_file(p.file);
    } else {
      // Everything of a kind (a listing, the names an error message offers): a plugin file that cannot load here (a
      // Python one, in a Python interpreter of a user's own) is left out, as broken, instead of failing the listing.
      // Asked for by name, it fails.
      try {
        self.load_plugin_file(p.file);
      } catch (const PluginError& e) {
        self.broken_.emplace_back(e.what());
      }
    }
    if (first_only) return;
  }
}

void Registry::load_pending_kind(OfferKind kind) const {
  load_pending([kind](const Offer& o) { return o.kind == kind; });
}

namespace {
/// Why `file` is not a complete 64-bit ELF shared object, or "" if it is one:
/// checked before dlopen, which would fault on a truncated file (SIGBUS).
std::string elf_problem(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  Elf64_Ehdr h{};
  if (!in.read(reinterpret_cast<char*>(&h), sizeof h)) return "shorter than an ELF header";
  if (std::memcmp(h.e_ident, ELFMAG, SELFMAG) != 0) return "not an ELF file";
  if (h.e_ident[EI_CLASS] != ELFCLASS64) return "not a 64-bit ELF file";
  if (h.e_type != ET_DYN) return "not a shared library";
  std::error_code ec;
  const std::uint64_t size = fs::file_size(file, ec);
  if (ec) return "its size cannot be read";
  auto past_end = [&](std::uint64_t offset, std::uint64_t bytes) { return offset > size || bytes > size - offset; };
  if (past_end(h.e_shoff, std::uint64_t{h.e_shnum} * h.e_shentsize) ||
      past_end(h.e_phoff, std::uint64_t{h.e_phnum} * h.e_phentsize))
    return "truncated (its header tables run past the end of the file)";
  for (unsigned i = 0; i < h.e_phnum; ++i) {
    Elf64_Phdr p{};
    in.seekg(static_cast<std::streamoff>(h.e_phoff + std::uint64_t{i} * h.e_phentsize));
    if (!in.read(reinterpret_cast<char*>(&p), sizeof p)) return "truncated (a program header cannot be read)";
    if (p.p_type == PT_LOAD && past_end(p.p_offset, p.p_filesz))
      return "truncated (a loadable segment runs past the end of the file)";
  }
  return "";
}
}  // namespace

namespace {
const char* g_loading = nullptr;  ///< library_being_loaded()

/// Names `file` as the library being loaded while it lives (loads nest: a plugin's entry point loads nothing, but
/// the guard restores whatever was named before).
class Loading {
 public:
  explicit Loading(const fs::path& file) : path_(file.string()), outer_(g_loading) { g_loading = path_.c_str(); }
  ~Loading() { g_loading = outer_; }
  Loading(const Loading&) = delete;
  Loading& operator=(const Loading&) = delete;

 private:
  std::string path_;
  const char* outer_;
};
}  // namespace

const char* library_being_loaded() noexcept { return g_loading; }

void Registry::load_library(const fs::path& file) {
  if (std::string why = elf_problem(file); !why.empty())
    throw PluginError(file.string() + ": cannot load library: " + why);
  const Loading loading(file);  // a fatal signal in its static initializers or entry point names it
  auto lib = std::make_unique<Library>();
  try {
    // RTLD_NOW: an unresolved symbol is an error here, naming the library, not
    // a loader abort in the middle of a run. RTLD_NODELETE: a library stays
    // mapped after the registry is gone, so an exception or message created by
    // plugin code outlives it safely.
    lib->lib.load(file, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local |
                            static_cast<boost::dll::load_mode::type>(RTLD_NODELETE));
  } catch (const std::exception& e) {
    throw PluginError(file.string() + ": cannot load library: " + e.what());
  }
  if (!lib->lib.has(KBSIM_PLUGIN_SYMBOL))
    throw PluginError(file.string() + ": not a kbsim plugin (no '" KBSIM_PLUGIN_SYMBOL "' entry point)");
  const PluginDescriptor* d = nullptr;
  try {
    d = lib->lib.get_alias<PluginEntry>(KBSIM_PLUGIN_SYMBOL)();
  } catch (const std::exception& e) {
    throw PluginError(file.string() + ": plugin registration failed: " + e.what());
  }
  if (d == nullptr) throw PluginError(file.string() + ": entry point returned no descriptor");
  adopt(file, d);
  libraries_.push_back(std::move(lib));
}

void Registry::load_plugin_file(const fs::path& file) {
  const std::string suffix = file.extension().string().substr(file.extension().empty() ? 0 : 1);
  const std::string kind(PluginFileLoader::kKind);
  load_pending([&](const Offer& o) { return o.kind == OfferKind::kExtension && o.name == kind && o.detail == suffix; });
  auto it = extensions_.find({kind, suffix});
  if (it == extensions_.end() || !it->second.ext->data)
    throw PluginError(file.string() + ": no plugin loads '." + suffix + "' files");
  const auto* loader = static_cast<const PluginFileLoader*>(it->second.ext->data.get());
  const Loading loading(file);
  const PluginDescriptor* d = nullptr;
  try {
    d = loader->load(file);
  } catch (const PluginError&) {
    throw;
  } catch (const std::exception& e) {
    throw PluginError(file.string() + ": " + e.what());
  }
  if (d == nullptr) throw PluginError(file.string() + ": its loader returned no descriptor");
  adopt(file, d);
}

void Registry::adopt(const fs::path& file, const PluginDescriptor* d) {
  if (d->abi_version != kAbiVersion)
    throw PluginError(file.string() + ": built for kbsim ABI " + std::to_string(d->abi_version) +
                      ", this kbsim has ABI " + std::to_string(kAbiVersion) + " (rebuild it against this SDK)");
  Provided from{library_name(file), file.string()};
  check_offers(file, offers_of(*d), false);  // against the libraries found and not loaded yet
  register_descriptor(*d, from);
  library_list_.push_back(
      {from.library, from.path, d->build_tag ? d->build_tag : "", d->name ? d->name : "", offers_of(*d)});
}

const std::vector<Registry::LibraryEntry>& Registry::libraries() const {
  auto& self = const_cast<Registry&>(*this);  // (a cache filled, as in load_pending)
  for (Pending& p : self.pending_)            // every one, those that offer nothing too
    if (!p.loaded) {
      p.loaded = true;
      if (!p.by_loader) {
        self.load_library(p.file);
        continue;
      }
      try {
        self.load_plugin_file(p.file);
      } catch (const PluginError& e) {
        if (!tolerant_) throw;
        self.broken_.emplace_back(e.what());
      }
    }
  return library_list_;
}

void index_plugin_directory(const fs::path& dir, const std::vector<fs::path>& loader_dirs) {
  Registry reg;
  reg.add_search_dir(dir, true);
  for (const fs::path& d : loader_dirs) reg.add_search_dir(d, false);
  reg.discover(false);
  const fs::path indexed = reg.search_dirs().front();
  std::vector<IndexedLibrary> records;
  for (const Registry::LibraryEntry& lib : reg.libraries()) {
    if (fs::path(lib.path).parent_path() != indexed) continue;  // a loader's library, from elsewhere
    IndexedLibrary& r = records.emplace_back();
    r.file = fs::path(lib.path).filename().string();
    if (!file_stamp(lib.path, r.stamp)) throw PluginError(lib.path + ": cannot read its size and time");
    r.offers = lib.offers;
  }
  write_plugin_index(indexed, records);
}

}  // namespace kbsim::core

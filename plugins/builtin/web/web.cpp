// `kbsim web`: a local HTTP server with an interactive viewer of the configured
// system and of runs' results (docs/model.md is not involved: this is a
// viewer). It serves its own page (assets/, compiled in), the topology as JSON
// (/api/topology, as a run's topology.json), the topology front-end's pictures
// (/api/view?name=system | sip/S | cube/S/C | pe/S/C/P), and the files of the
// result folders named with --results (/api/results, /results/K/FILE), and
// nothing else: a request for a file outside those folders is refused. It
// listens on 127.0.0.1 unless --host says otherwise and stops on Ctrl-C.
#include <httplib.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "kbsim/command.hpp"
#include "kbsim/json/json.hpp"
#include "kbsim/plugin.hpp"
#include "web_assets.hpp"

namespace {

namespace fs = std::filesystem;

std::atomic<bool> g_stop{false};
extern "C" void on_signal(int) { g_stop = true; }

const char* content_type(const fs::path& p) {
  const std::string e = p.extension().string();
  if (e == ".json") return "application/json";
  if (e == ".svg") return "image/svg+xml";
  if (e == ".png") return "image/png";
  if (e == ".html") return "text/html; charset=utf-8";
  if (e == ".csv") return "text/csv; charset=utf-8";
  if (e == ".js") return "application/javascript";
  if (e == ".css") return "text/css";
  return "text/plain; charset=utf-8";
}

/// A result folder the viewer may serve files from.
struct Folder {
  std::string label;  ///< as given on the command line
  fs::path root;      ///< canonical
};

/// The canonical file `rel` names inside `root`, or empty when it is not a regular file inside it.
fs::path inside(const fs::path& root, const std::string& rel) {
  if (rel.empty() || rel.find('\0') != std::string::npos) return {};
  std::error_code ec;
  const fs::path p = fs::weakly_canonical(root / rel, ec);
  if (ec) return {};
  const auto [r, q] = std::mismatch(root.begin(), root.end(), p.begin(), p.end());
  if (r != root.end() || !fs::is_regular_file(p, ec)) return {};
  return p;
}

std::string read_file(const fs::path& p) {
  std::FILE* f = std::fopen(p.c_str(), "rb");
  if (!f) return {};
  std::string out;
  char buf[65536];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) out.append(buf, n);
  std::fclose(f);
  return out;
}

/// The files of a result folder (two levels deep), relative and sorted.
std::vector<std::string> files_of(const fs::path& root) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (it.depth() > 1) it.disable_recursion_pending();
    if (it->is_regular_file(ec)) out.push_back(fs::relative(it->path(), root, ec).string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

constexpr kbsim::IntParam kPort{"port", 8765, "TCP port (0: any free one; the address is printed)"};
constexpr kbsim::StringParam kHost{"host", "127.0.0.1", "address to listen on (loopback unless you say otherwise)"};
constexpr kbsim::BoolParam kNoOpen{"no-open", false, "do not open a browser"};
constexpr kbsim::StringParam kResults{"results", "", "result folders to show, comma-separated (kbsim run --out DIR)"};

class Web final : public kbsim::Command {
 public:
  static kbsim::CommandInfo info() {
    return {"web",
            "an interactive viewer of the system and of runs' results, in the browser (a local HTTP server)",
            {kPort, kHost, kNoOpen, kResults}};
  }

  int run(kbsim::CommandContext& ctx) override {
    const kbsim::Params& o = ctx.options();
    const std::int64_t port = o.get(kPort);
    o.check(port >= 0 && port <= 65535, kPort, "must be in 0..65535");
    folders_.clear();
    std::stringstream list(o.get(kResults));
    for (std::string item; std::getline(list, item, ',');) {
      if (item.empty()) continue;
      std::error_code ec;
      if (!fs::is_directory(item, ec))
        throw kbsim::UsageError("--results " + item + ": not a folder (give the --out folder of a kbsim run)");
      folders_.push_back({item, fs::canonical(item, ec)});
    }
    topology_ = ctx.topology_json();  // a bad topology is reported before anything is served
    ctx_ = &ctx;

    httplib::Server svr;
    routes(svr);
    const std::string host = o.get(kHost);
    int bound = static_cast<int>(port);
    if (port == 0) {
      bound = svr.bind_to_any_port(host);
    } else if (!svr.bind_to_port(host, bound)) {
      bound = -1;
    }
    if (bound < 0)
      throw kbsim::UsageError("kbsim web: cannot listen on " + host + ":" + std::to_string(port) +
                              " (in use? try --port 0)");
    const std::string url = "http://" + host + ":" + std::to_string(bound) + "/";
    std::printf("kbsim web: serving the viewer at %s (%zu result folder(s); Ctrl-C stops it)\n", url.c_str(),
                folders_.size());
    std::fflush(stdout);
    if (!o.get(kNoOpen)) open_browser(url);

    g_stop = false;
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    struct sigaction old_int {
    }, old_term{};
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    std::thread watch([&] {
      while (!g_stop) std::this_thread::sleep_for(std::chrono::milliseconds(50));
      svr.stop();
    });
    svr.listen_after_bind();
    g_stop = true;
    watch.join();
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGTERM, &old_term, nullptr);
    std::printf("kbsim web: stopped\n");
    return 0;
  }

 private:
  void routes(httplib::Server& svr) {
    auto asset = [&](const char* path, const char* type, std::string_view body) {
      svr.Get(path, [type, body](const httplib::Request&, httplib::Response& res) {
        res.set_content(std::string(body), type);
      });
    };
    asset("/", "text/html; charset=utf-8", kbsim::web::kIndexHtml);
    asset("/index.html", "text/html; charset=utf-8", kbsim::web::kIndexHtml);
    asset("/viewer.js", "application/javascript", kbsim::web::kViewerJs);
    asset("/viewer.css", "text/css", kbsim::web::kViewerCss);
    svr.Get("/api/topology", [this](const httplib::Request&, httplib::Response& res) {
      res.set_content(topology_, "application/json");
    });
    svr.Get("/api/view", [this](const httplib::Request& req, httplib::Response& res) {
      const std::string name = req.get_param_value("name");
      std::string svg;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = views_.find(name);
        if (it == views_.end()) it = views_.emplace(name, name.size() > 64 ? std::string() : ctx_->view(name)).first;
        svg = it->second;
      }
      if (svg.empty()) {
        res.status = 404;
        res.set_content("no view named '" + name + "'", "text/plain");
        return;
      }
      res.set_content(svg, "image/svg+xml");
    });
    svr.Get("/api/results", [this](const httplib::Request&, httplib::Response& res) {
      res.set_content(kbsim::json::write_json_string([&](kbsim::json::JsonWriter& w) {
                        w.begin_array();
                        for (std::size_t k = 0; k < folders_.size(); ++k) {
                          w.begin_object();
                          w.field("index", static_cast<std::uint64_t>(k));
                          w.field("label", folders_[k].label);
                          w.key("files");
                          w.begin_array();
                          for (const std::string& f : files_of(folders_[k].root)) w.value(f);
                          w.end_array();
                          w.end_object();
                        }
                        w.end_array();
                      }),
                      "application/json");
    });
    svr.Get(R"(/results/(\d+)/(.+))", [this](const httplib::Request& req, httplib::Response& res) {
      const std::size_t k = std::stoul(req.matches[1].str());
      const fs::path file = k < folders_.size() ? inside(folders_[k].root, req.matches[2].str()) : fs::path();
      if (file.empty()) {
        res.status = 404;
        res.set_content("not a file of a served result folder", "text/plain");
        return;
      }
      res.set_content(read_file(file), content_type(file));
    });
  }

  static void open_browser(const std::string& url) {
    if (std::system("command -v xdg-open >/dev/null 2>&1") != 0) return;
    const std::string cmd = "xdg-open '" + url + "' >/dev/null 2>&1 &";
    if (std::system(cmd.c_str()) != 0)
      std::fprintf(stderr, "kbsim web: could not open a browser; open %s\n", url.c_str());
  }

  std::vector<Folder> folders_;
  std::string topology_;
  kbsim::CommandContext* ctx_ = nullptr;
  std::mutex mutex_;  ///< the server answers on several threads; pictures are made once each
  std::map<std::string, std::string> views_;
};

}  // namespace

KBSIM_PLUGIN("web") { kbsim::add_command<Web>(plugin); }

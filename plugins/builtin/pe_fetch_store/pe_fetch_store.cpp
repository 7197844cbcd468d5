// builtin.pe_fetch_store: moves tiles between the PE's TCM and the register
// file (docs/model.md, "The PE"). FETCH reads stage.nbytes from PE_TCM, STORE
// writes them; PE_TCM's read and write channels set the time, so a fetch and a
// store run together while fetches (or stores) of several tiles queue at their
// channel. overhead_ns is added after the TCM has answered.
#include "kbsim/pe/command.hpp"
#include "kbsim/plugin.hpp"

namespace {

using kbsim::Ref;
using kbsim::pe::StageType;
using kbsim::pe::TcmRequest;
using kbsim::pe::TileToken;

constexpr kbsim::FloatParam kOverheadNs{"overhead_ns", 0.0, "time added to every stage after the TCM access"};
constexpr kbsim::NodeParam kTcm{"tcm", "pe_tcm",
                                "its PE's TCM (in the PE template, a component name means that sibling)"};

class PeFetchStore final : public kbsim::pe::StageEngine {
 public:
  explicit PeFetchStore(const kbsim::ComponentContext& ctx)
      : StageEngine(ctx),
        overhead_(kbsim::ns_to_ticks(params().get(kOverheadNs))),
        fetches_(stat(kStatFetches)),
        stores_(stat(kStatStores)),
        fetch_bytes_(stat(kStatFetchBytes)),
        store_bytes_(stat(kStatStoreBytes)),
        busy_(stat(kStatBusyNs)) {
    params().check(params().get(kOverheadNs) >= 0, kOverheadNs, "must be >= 0");
  }

  // Statistics, declared once: info() lists them, stat() binds them.
  static constexpr kbsim::StatDef kStatFetches{"fetches", kbsim::StatKind::kCounter, "stages", "FETCH stages run"};
  static constexpr kbsim::StatDef kStatStores{"stores", kbsim::StatKind::kCounter, "stages", "STORE stages run"};
  static constexpr kbsim::StatDef kStatFetchBytes{"fetch_bytes", kbsim::StatKind::kCounter, "bytes",
                                                  "bytes fetched from the TCM"};
  static constexpr kbsim::StatDef kStatStoreBytes{"store_bytes", kbsim::StatKind::kCounter, "bytes",
                                                  "bytes stored to the TCM"};
  static constexpr kbsim::StatDef kStatBusyNs{"busy_ns", kbsim::StatKind::kValue, "ns",
                                              "stage time summed over stages (fetch and store overlap)"};

  static kbsim::ComponentInfo info() {
    kbsim::ComponentInfo i;
    i.type = "pe_fetch_store";
    i.summary = "PE TCM <-> register file transfers: FETCH reads and STORE writes PE_TCM";
    i.params = {kOverheadNs, kTcm};
    i.ports = {{"pe_internal", "PE-internal links: tile tokens from and to the other engines"},
               {"pe_data", "PE-internal data links: TCM requests to and answers from pe_tcm"}};
    i.stats = {kStatFetches, kStatStores, kStatFetchBytes, kStatStoreBytes, kStatBusyNs};
    return i;
  }

  void setup() override {
    const kbsim::NodeIndex tcm = params().get(kTcm);
    if (tcm == kbsim::kNoNode) fail("needs a TCM (parameter 'tcm')");
    tcm_port_ = out_port_to(tcm);
    if (tcm_port_ == kbsim::kNoPort)
      fail("no PE-internal link to " + std::string(node_id(tcm)) + "; add it to cube.pe_template.links");
  }

  void on_timer(std::uint64_t, Ref<kbsim::Message> msg) override { complete(msg->as<TcmRequest>()); }

 private:
  void accept(Ref<TileToken> t, bool) override {
    StageType type = t->current().type;
    if (type != StageType::kFetch && type != StageType::kStore)
      fail("received a " + std::string(kbsim::pe::stage_name(type)) + " stage; it runs fetch and store stages");
    Ref<TcmRequest> r = kbsim::make_message<TcmRequest>();
    r->write = type == StageType::kStore;
    r->nbytes = t->current().nbytes;
    r->from = index();
    r->token = std::move(t);
    r->t_start = now();
    send(tcm_port_, std::move(r));
  }

  void on_other(kbsim::PortIndex, Ref<kbsim::Message> msg) override {
    if (!msg->is<TcmRequest>() || !msg->as<TcmRequest>().is_response)
      fail("received a message that is neither a tile token nor a TCM answer");
    if (overhead_ > 0) return void(schedule(overhead_, 0, std::move(msg)));
    complete(msg->as<TcmRequest>());
  }

  void complete(TcmRequest& r) {
    ++(r.write ? stores_ : fetches_).count;
    (r.write ? store_bytes_ : fetch_bytes_).count += r.nbytes;
    busy_.value += kbsim::ticks_to_ns(now() - r.t_start);
    finish_stage(std::move(r.token), r.t_start);
  }

  kbsim::Tick overhead_;
  kbsim::PortIndex tcm_port_ = kbsim::kNoPort;
  kbsim::Stat &fetches_, &stores_, &fetch_bytes_, &store_bytes_, &busy_;
};

}  // namespace

KBSIM_PLUGIN("pe_fetch_store") { kbsim::add_component<PeFetchStore>(plugin); }

// Flit trains advanced as a whole: the simulation's half (the node's half is its on_train / on_train_cut, e.g.
// kbsim::Forwarder). docs/architecture.md, "Flit trains advanced as a whole", says why each step is exact.
#include "component/simulation.hpp"

namespace kbsim::core {

std::uint64_t Simulation::train_lane(const TrainHop& h, std::uint32_t i) const noexcept {
  return h.fixed ? h.lane0 : lane_for(h.arrive.at(i), h.sent.at(i), h.from);
}

void Simulation::arm_train(std::uint32_t i, std::uint32_t flit, Component* to) {
  TrainHop& h = trains_[i];
  Event& ev = engine_.schedule(h.arrive.at(flit), 128, Order{h.root, train_lane(h, flit)}, &h.event);
  ev.target = this;
  ev.set_kind(EventKind::kTrain);
  ev.hint = to;
  ev.take(Ref<Message>(h.msg));
  ev.port = h.port;
  ev.link = i;
  ev.index = flit;
}

bool Simulation::send_train(const Wire& wire, const Link& link, Ref<Message>& msg, std::uint32_t hop, Link::Shape shape,
                            Tick start) {
  const Tick last = link.ser(shape.last_bytes);
  if (!trains_on_ || link.ser_full == 0 || last == 0) return false;  // (flits must arrive one instant each)
  const std::uint32_t i = trains_.add();
  TrainHop& h = trains_[i];
  const Order order = order_for(start, link.src);  // (a link train's flits all keep its first event's order)
  h.msg = std::move(msg);
  h.arrive = FlitTimes::train(shape.count, start, link.ser_full, last, link.latency);
  h.fixed = true;
  h.root = order.root;
  h.lane0 = lane_for(h.arrive.front(), engine_.now(), link.src);
  h.from = link.src;
  h.to = link.dst;
  h.port = link.dst_port;
  h.hop = hop;
  h.count = shape.count;
  h.full_bytes = link.flit_bytes;
  h.last_bytes = shape.last_bytes;
  h.lim = shape.count;
  h.pending = true;
  arm_train(i, 0, wire.dst);
  return true;
}

Tick Simulation::on_train_event(Component& c, Event& ev) {
  const std::uint32_t i = ev.link;
  TrainHop& h = trains_[i];
  if (h.pending) {
    h.pending = false;
    if (c.on_train(h.port, train_view(i))) {
      h.held = true;
      h.event = {};
      return kNever;
    }
    h.walk = 0;
  }
  // Flit by flit: this flit now, then the event fires again for the next.
  const std::uint32_t f = h.walk;
  c.on_flit(h.port, Flit{h.msg.get(), f, h.count, f + 1 < h.count ? h.full_bytes : h.last_bytes, h.hop});
  if (h.walk != f) return kNever;  // (its walk was cancelled meanwhile; the record is settled there)
  if (f + 1 >= h.lim) {
    h.walk = TrainHop::kNone;
    h.event = {};
    settle_train(i);
    return kNever;
  }
  h.walk = f + 1;
  ev.index = f + 1;
  engine_.set_running_lane(train_lane(h, f + 1));
  return h.arrive.at(f + 1);
}

bool Simulation::forward_train(NodeIndex from, PortIndex out, const Train& train, const FlitTimes& ready) {
  TrainHop* hp = trains_.find(train.id);
  if (!hp || hp->to != from || hp->whole != 0) fail_at(*this, from, "forwards a train it was not handed");
  TrainHop& h = *hp;
  const std::uint32_t self = train.id.slot;
  Wire& wire = out_wire(from, out);
  const Link& link = link_of(wire);
  Load& load = load_of(wire);
  if (!wire.dst) return false;
  if (link.accepts) [[unlikely]]
    check_type(*this, link, *h.msg);
  const Tick full = link.ser(h.full_bytes), last = link.ser(h.last_bytes);
  if (link.dst_flit_aware && (full == 0 || last == 0)) return false;
  const std::optional<FlitTimes> starts = ready.link_starts(load.busy_until, full);
  if (!starts) return false;
  const std::uint32_t n = h.count, lim = h.lim;
  // The link, as the flits [0, lim) forwarded one by one would leave it.
  h.out = static_cast<std::uint32_t>(&wire - wires_.data());
  h.busy_before = load.busy_until;
  h.starts = *starts;
  h.ser_full = full;
  h.ser_last = last;
  h.whole = lim;
  train_flits_ += lim - 1;  // (its one event stands for lim flits' events)
  load.busy_until = starts->at(lim - 1) + h.ser(lim - 1);
  load.busy += h.link_time(0, lim);
  load.flits += lim;
  load.bytes += train.bytes(0, lim);
  if (lim == n) ++wire.messages;
  const FlitTimes arrive =
      starts->shifted((n > 1 ? full : last) + link.latency, full + link.latency, last + link.latency);
  if (link.dst_flit_aware) {
    const std::uint32_t k = trains_.add();
    TrainHop& next = trains_[k];
    TrainHop& me = trains_[self];  // (stable: the pool's records do not move)
    next.msg = me.msg;
    next.arrive = arrive;
    next.sent = me.arrive;
    next.root = engine_.running_root();
    next.from = from;
    next.to = link.dst;
    next.port = link.dst_port;
    next.hop = me.hop + 1;
    next.count = n;
    next.full_bytes = me.full_bytes;
    next.last_bytes = me.last_bytes;
    next.lim = lim;
    next.pending = link.dst_trains;
    if (!next.pending) next.walk = 0;
    me.next = trains_.id_of(k);
    arm_train(k, 0, wire.dst);
  } else if (lim == n) {
    // The whole message arrives with its last flit, ordered as the last flit's forward would order it.
    const Tick at = arrive.back();
    Event& ev =
        engine_.schedule(at, 128, Order{engine_.running_root(), lane_for(at, h.arrive.back(), from)}, &h.delivery);
    ev.target = this;
    ev.set_kind(EventKind::kMessage);
    ev.hint = wire.dst;
    ev.take(Ref<Message>(h.msg));
    ev.port = link.dst_port;
    h.delivers = true;
  }
  return true;
}

void Simulation::unwind_train(std::uint32_t i, std::uint32_t keep) {
  TrainHop& h = trains_[i];
  components_[h.to]->on_train_cut(train_view(i), keep);
  Load& load = loads_[h.out];
  load.busy_until = keep == 0 ? h.busy_before : h.starts.at(keep - 1) + h.ser(keep - 1);
  load.busy -= h.link_time(keep, h.whole);
  load.flits -= h.whole - keep;
  load.bytes -= train_view(i).bytes(keep, h.whole);
  if (h.whole == h.count) --wires_[h.out].messages;
  train_flits_ -= h.whole - keep;
  h.whole = keep;
  if (h.delivers) {
    engine_.cancel(h.delivery);
    h.delivers = false;
  }
  if (h.next.valid()) shorten_train(h.next, keep);
}

void Simulation::shorten_train(TrainId id, std::uint32_t lim) {
  TrainHop* hp = trains_.find(id);
  if (!hp || lim >= hp->lim) return;
  const std::uint32_t i = id.slot;
  hp->lim = lim;
  if (hp->whole > lim) unwind_train(i, lim);
  TrainHop& h = trains_[i];
  if (h.walk != TrainHop::kNone && h.walk >= lim) {
    engine_.cancel(h.event);
    h.walk = TrainHop::kNone;
    h.event = {};
    settle_train(i);
  }
}

void Simulation::cut_train(NodeIndex self, TrainId id) {
  TrainHop* hp = trains_.find(id);
  if (!hp || hp->to != self || !hp->held) fail_at(*this, self, "cuts a train it does not hold");
  const std::uint32_t i = id.slot;
  TrainHop& h = *hp;
  // The flits that came before the running event: those of an earlier time, and of its time those ordered before it
  // (the first flit always: its event ran).
  std::uint32_t keep = h.arrive.first_at_or_after(engine_.now());
  if (keep < h.whole && h.arrive.at(keep) == engine_.now() && engine_.running_after(Order{h.root, train_lane(h, keep)}))
    ++keep;
  keep = std::max<std::uint32_t>(keep, 1);
  h.held = false;
  if (keep < h.whole) {
    unwind_train(i, keep);
    TrainHop& again = trains_[i];
    if (keep < again.lim) {  // the rest of what was taken whole comes flit by flit from here
      again.walk = keep;
      arm_train(i, keep, components_[self].get());
      return;
    }
  }
  settle_train(i);
}

void Simulation::done_train(NodeIndex self, TrainId id) {
  TrainHop* hp = trains_.find(id);
  if (!hp || hp->to != self || !hp->held) return;
  hp->held = false;
  settle_train(id.slot);
}

void Simulation::settle_train(std::uint32_t i) {
  const TrainHop& h = trains_[i];
  if (!h.held && !h.pending && h.walk == TrainHop::kNone) trains_.free(i);
}

}  // namespace kbsim::core

// Flit trains advanced as a whole: the simulation's half (the node's half is its on_train / on_train_cut, e.g.
// kbsim::Forwarder). docs/architecture.md, "Flit trains advanced as a whole", says why each step is exact.
#include "component/simulation.hpp"

namespace kbsim::core {

std::uint64_t Simulation::train_lane(const TrainHop& h, std::uint32_t i) const noexcept {
  if (h.fixed) return h.lane0;
  if (h.source) return lane_for(h.time(i), h.made, h.from);  // (as a timer set when it was made)
  return lane_for(h.arrive.at(i), h.sent_list.empty() ? h.sent.at(i) : h.sent_list[i], h.from);
}

void Simulation::arm_train(std::uint32_t i, std::uint32_t flit, Component* to) {
  TrainHop& h = trains_[i];
  Event& ev = engine_.schedule(h.time(flit), 128, Order{h.root, train_lane(h, flit)}, &h.event);
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
  if (h.source)
    c.on_timer(h.tag + f, Ref<Message>(h.msg));  // (the timer it stands for)
  else
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
  return h.time(f + 1);
}

bool Simulation::forward_train(NodeIndex from, PortIndex out, const Train& train, const FlitTimes& ready) {
  TrainHop* hp = trains_.find(train.id);
  if (!hp || hp->to != from || hp->whole != 0 || hp->source) fail_at(*this, from, "forwards a train it was not handed");
  Wire& wire = out_wire(from, out);
  const Link& link = link_of(wire);
  if (!wire.dst) return false;
  if (link.accepts) [[unlikely]]
    check_type(*this, link, *hp->msg);
  const Tick full = link.ser(hp->full_bytes), last = link.ser(hp->last_bytes);
  if (link.dst_flit_aware && (full == 0 || last == 0)) return false;
  const std::optional<FlitTimes> starts = ready.link_starts(load_of(wire).busy_until, full);
  if (!starts) return false;
  onto_link(train.id.slot, wire, *starts, full, last);
  train_flits_ += hp->whole - 1;  // (its one event stands for as many flits' events)
  return true;
}

TrainId Simulation::send_train(NodeIndex from, PortIndex out, Ref<Message> msg, std::span<const Tick> at,
                               std::uint32_t full_bytes, std::uint64_t tag) {
  const auto n = static_cast<std::uint32_t>(at.size());
  Wire& wire = out_wire(from, out);
  const Link& link = link_of(wire);
  if (!trains_on_ || n < 2 || !wire.dst || !msg || full_bytes == 0) return {};
  if (msg->bytes <= std::uint64_t{n - 1} * full_bytes || msg->bytes > std::uint64_t{n} * full_bytes) return {};
  const auto last_bytes = static_cast<std::uint32_t>(msg->bytes - std::uint64_t{n - 1} * full_bytes);
  const Tick full = link.ser(full_bytes), last = link.ser(last_bytes);
  if (link.dst_flit_aware && (full == 0 || last == 0)) return {};
  if (at.front() < engine_.now()) fail_at(*this, from, "sends a train with a flit in the past");
  // Each flit starts on the link when handed over or when the one before has left; taken whole only when the
  // starts between the first and the last are evenly spaced (a link as slow as what feeds it, or slower).
  Tick busy = load_of(wire).busy_until, st0 = 0, prev = 0;
  std::int64_t c = 0;
  for (std::uint32_t i = 0; i < n; ++i) {
    if (i > 0 && at[i] < at[i - 1]) fail_at(*this, from, "sends a train whose flits are handed over out of order");
    const Tick st = std::max(at[i], busy);
    busy = st + (i + 1 < n ? full : last);
    if (i == 0) st0 = st;
    if (i == 1) c = static_cast<std::int64_t>(st) - static_cast<std::int64_t>(full);
    if (i >= 1 && i + 1 < n && static_cast<std::int64_t>(st) != c + static_cast<std::int64_t>(Tick{i} * full))
      return {};
    prev = st;
  }
  if (link.accepts) [[unlikely]]
    check_type(*this, link, *msg);
  const std::uint32_t k = trains_.add();
  TrainHop& h = trains_[k];
  h.msg = std::move(msg);
  h.list.assign(at.begin(), at.end());
  h.source = true;
  h.made = engine_.now();
  h.tag = tag;
  h.root = order_for(at.front(), from).root;
  h.from = h.to = from;
  h.count = h.lim = n;
  h.full_bytes = full_bytes;
  h.last_bytes = last_bytes;
  h.held = true;
  onto_link(k, wire, FlitTimes::affine(n, st0, c, full, prev), full, last);
  train_flits_ += n;  // (no event of its own: it stands for its n timers)
  return trains_.id_of(k);
}

void Simulation::onto_link(std::uint32_t i, Wire& wire, const FlitTimes& starts, Tick full, Tick last) {
  const Link& link = link_of(wire);
  Load& load = load_of(wire);
  TrainHop& h = trains_[i];
  const std::uint32_t n = h.count, lim = h.lim;
  // The link, as the flits [0, lim) forwarded one by one would leave it.
  h.out = static_cast<std::uint32_t>(&wire - wires_.data());
  h.busy_before = load.busy_until;
  h.starts = starts;
  h.ser_full = full;
  h.ser_last = last;
  h.whole = lim;
  load.busy_until = starts.at(lim - 1) + h.ser(lim - 1);
  load.busy += h.link_time(0, lim);
  load.flits += lim;
  load.bytes += train_view(i).bytes(0, lim);
  if (lim == n) ++wire.messages;
  const FlitTimes arrive =
      starts.shifted((n > 1 ? full : last) + link.latency, full + link.latency, last + link.latency);
  const std::uint32_t root = engine_.dispatching() ? engine_.running_root() : h.root;
  if (link.dst_flit_aware) {
    const std::uint32_t k = trains_.add();
    TrainHop& next = trains_[k];
    TrainHop& me = trains_[i];  // (stable: the pool's records do not move)
    next.msg = me.msg;
    next.arrive = arrive;
    if (me.source)
      next.sent_list.assign(me.list.begin(), me.list.end());
    else
      next.sent = me.arrive;
    next.root = root;
    next.from = me.to;  // (the node that hands them on: a source is its own)
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
    Event& ev = engine_.schedule(at, 128, Order{root, lane_for(at, h.time(n - 1), h.to)}, &h.delivery);
    ev.target = this;
    ev.set_kind(EventKind::kMessage);
    ev.hint = wire.dst;
    ev.take(Ref<Message>(h.msg));
    ev.port = link.dst_port;
    h.delivers = true;
  }
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
  if (hp->pending && lim == 0) {  // (nothing of it arrives as computed: all comes flit by flit)
    engine_.cancel(hp->event);
    hp->pending = false;
    hp->event = {};
    settle_train(i);
    return;
  }
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
  std::uint32_t keep = h.first_at_or_after(engine_.now());
  // (a source's flits may share a time, and then an order: they are timers set together)
  while (keep < h.whole && h.time(keep) == engine_.now() && engine_.dispatching() &&
         engine_.running_after(Order{h.root, train_lane(h, keep)}))
    ++keep;
  if (!h.source) keep = std::max<std::uint32_t>(keep, 1);  // (a source's flits are its timers: none may have run)
  h.held = false;
  if (keep < h.whole) {
    unwind_train(i, keep);
    TrainHop& again = trains_[i];
    if (keep < again.lim && again.source) {
      // A source's flits are its timers: set them all now, one after another, as they were set (one walking event
      // would be set again after each fires, after events set meanwhile of its time and order).
      for (std::uint32_t f = keep; f < again.lim; ++f) {
        Event& ev = engine_.schedule(again.time(f), 128, Order{again.root, train_lane(again, f)});
        ev.target = this;
        ev.set_kind(EventKind::kTimer);
        ev.hint = components_[self].get();
        ev.tag = again.tag + f;
        ev.take(Ref<Message>(again.msg));
      }
    } else if (keep < again.lim) {  // the rest of what was taken whole comes flit by flit from here
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

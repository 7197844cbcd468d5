// Messages: typed payloads that plugins define without touching the core.
//
// A message is reference counted (intrusively) and recycled through a per-type
// free list, so sending one costs no heap allocation once the pool is warm.
#pragma once

#include <algorithm>
#include <cstdint>
#include <new>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kbsim/bytes.hpp"
#include "kbsim/errors.hpp"

namespace kbsim {

using TypeId = std::uint64_t;

/// A stable 64-bit id for a message type name (FNV-1a). Identical in every library.
constexpr TypeId type_id(std::string_view name) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : name) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

struct Route;
struct OpRecord;

/// The type name of a message not made by make_message.
inline constexpr std::string_view kUnnamedMessage = "?";

/// Base of every payload. Derive, and give the derived type
/// `static constexpr std::string_view kName = "family.Name";` and
/// `static constexpr TypeId kType = type_id(kName);` (a port declares the
/// message types it accepts by these names, see PortSpec).
///
/// The base is one cache line (64 bytes), and pools place each message at the start of a line: what every send and
/// delivery touches (size, sender, reference count, type) comes first.
class Message {
 public:
  /// Size on the wire; decides the number of flits. 0 = control message (latency only).
  std::uint64_t bytes = 0;

 private:
  const std::string_view* sender_ = nullptr;  ///< the sending node's id, kept by the simulation

 public:
  /// Path for transit nodes to follow (set by the sender from `Component::route_to`).
  const Route* route = nullptr;

 private:
  TypeId type_;
  std::uint32_t refs_ = 0;
  bool data_op_;

 public:
  /// A control message (0 bytes) on a request channel: transit nodes pass it
  /// without their overhead, only link latency, as a request network apart
  /// from the data path would. Ignored on messages that carry bytes.
  bool request_channel = false;

 private:
  void (*recycle_)(Message*) noexcept = nullptr;
  const std::string_view* name_ = &kUnnamedMessage;  ///< its type's kName, a literal of the library that made it

 public:
  Message(const Message&) = delete;
  Message& operator=(const Message&) = delete;
  virtual ~Message() = default;

  TypeId type() const noexcept { return type_; }
  /// Its type's name ("family.Name"); "?" for one not made by make_message.
  std::string_view type_name() const noexcept { return *name_; }
  /// The node that last sent it (the core stamps it on every send; empty before).
  std::string_view sender() const noexcept { return sender_ ? *sender_ : std::string_view(); }
  /// Called by the core when a node sends it: `node` is its id, which outlives the message's use.
  void stamp_sender(const std::string_view* node) noexcept { sender_ = node; }
  template <class T>
  bool is() const noexcept {
    return type_ == T::kType;
  }
  /// Checked downcast; throws SimError naming both types on a mismatch.
  template <class T>
  T& as() {
    if (!is<T>())
      throw SimError("message type mismatch: expected " + std::string(expected_name<T>()) + ", got " +
                     std::string(type_name()) +
                     (sender().empty() ? std::string() : " (sent by " + std::string(sender()) + ")"));
    return static_cast<T&>(*this);
  }

  template <class T>
  static constexpr std::string_view expected_name() noexcept {
    if constexpr (requires { T::kName; })
      return T::kName;
    else
      return "another type";
  }

  /// A data operation: with an op log on, the core records each component's
  /// service of it (see kbsim/op_record.hpp).
  bool data_op() const noexcept { return data_op_; }
  /// Fill in kind, name, params, data and flow of the operation the receiving
  /// component (r.component, already set) is about to service (called at
  /// delivery). False: this hop is not an operation (e.g. the message is an
  /// answer, or only passes through).
  virtual bool describe_op(OpRecord& r) const {
    (void)r;
    return false;
  }

  /// Its own fields (beyond this base), for a message that crosses to another process of a split run
  /// (docs/scale-out.md). A type that can cross overrides both, writing and reading the same fields in the same
  /// order (a type with no fields of its own overrides them empty) and is registered with add_message<T>. The
  /// defaults refuse: a type that cannot cross is named when it would have to.
  virtual void save(ByteWriter& w) const {
    (void)w;
    throw SimError("message type " + std::string(type_name()) + " cannot cross between processes: it has no save/load");
  }
  virtual void load(ByteReader& r) {
    (void)r;
    throw SimError("message type " + std::string(type_name()) + " cannot cross between processes: it has no save/load");
  }
  /// A message that always comes back to the process it was made on (a request answered in place, whose answer
  /// goes back to where it was made, whatever way either takes): when it leaves that process, the process keeps the
  /// object, and when it comes back, loads its bytes into it, so whatever save/load leave out (pointers to its
  /// client, the request it was split from) is still there. A type that says so must come back.
  virtual bool returns() const noexcept { return false; }

 protected:
  explicit Message(TypeId t, bool data_op = false) noexcept : type_(t), data_op_(data_op) {}

 private:
  template <class T>
  friend class Ref;
  template <class T>
  friend class MessagePool;
};
static_assert(sizeof(Message) == 64, "the message base is one cache line");

/// Intrusive reference to a message. Copy = share; the last reference recycles it.
template <class T = Message>
class Ref {
 public:
  Ref() noexcept = default;
  Ref(std::nullptr_t) noexcept {}
  explicit Ref(T* p) noexcept : p_(p) {
    if (p_) ++p_->refs_;
  }
  Ref(const Ref& o) noexcept : Ref(o.p_) {}
  Ref(Ref&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  template <class U>
  Ref(Ref<U>&& o) noexcept : p_(o.release()) {}
  template <class U>
  Ref(const Ref<U>& o) noexcept : Ref(o.get()) {}
  Ref& operator=(Ref o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }
  ~Ref() { reset(); }

  void reset() noexcept {
    if (p_ && --p_->refs_ == 0) p_->recycle_(p_);
    p_ = nullptr;
  }
  /// Gives up ownership without decrementing (for moving between Ref types).
  T* release() noexcept { return std::exchange(p_, nullptr); }
  T* get() const noexcept { return p_; }
  T* operator->() const noexcept { return p_; }
  T& operator*() const noexcept { return *p_; }
  explicit operator bool() const noexcept { return p_ != nullptr; }

 private:
  T* p_ = nullptr;
};

/// Pool for one message type (one per library that creates the type): messages are carved from line-aligned
/// chunks and recycled through a free list.
template <class T>
class MessagePool {
 public:
  static MessagePool& instance() {
    static MessagePool pool;
    return pool;
  }
  template <class... Args>
  Ref<T> make(Args&&... args) {
    void* mem;
    if (!free_.empty()) {
      mem = free_.back();
      free_.pop_back();
    } else {
      if (next_ == end_) add_chunk();
      mem = next_;
      next_ += kStride;
    }
    T* obj = new (mem) T(std::forward<Args>(args)...);
    obj->recycle_ = &MessagePool::recycle;
    if constexpr (requires { T::kName; }) obj->name_ = &T::kName;  // a literal of its library, which stays loaded
    return Ref<T>(obj);
  }
  MessagePool() = default;
  MessagePool(const MessagePool&) = delete;
  MessagePool& operator=(const MessagePool&) = delete;
  ~MessagePool() {
    const std::size_t carved = capacity_ - static_cast<std::size_t>(end_ - next_) / kStride;
    if (free_.size() < carved) return;  // messages still referenced somewhere (at exit): their memory stays theirs
    for (void* c : chunks_) ::operator delete(c, kAlign);
  }

 private:
  static constexpr std::size_t kLine = 64;
  static constexpr std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }
  /// A message of one line (every control message) takes a whole line, so it is one line to fetch; a larger one
  /// is packed (rounding it to lines would cost more memory than its base's second line costs time).
  static constexpr std::size_t kGrain = alignof(T) > 16 ? alignof(T) : 16;
  static constexpr std::size_t kStride = sizeof(T) <= kLine ? kLine : round_up(sizeof(T), kGrain);
  static constexpr std::align_val_t kAlign{kGrain > kLine ? kGrain : kLine};

  /// A chunk as large as every one before it together (8 messages at first, at most 256): few chunks for a busy
  /// type, little memory for a rare one.
  void add_chunk() {
    const std::size_t count = std::clamp<std::size_t>(capacity_, 8, 256);
    // First (a failure then changes nothing), and geometrically: so recycling never allocates.
    if (free_.capacity() < capacity_ + count) free_.reserve(std::max(capacity_ + count, 2 * free_.capacity()));
    if (chunks_.size() == chunks_.capacity()) chunks_.reserve(2 * chunks_.size() + 1);
    next_ = static_cast<char*>(::operator new(kStride* count, kAlign));
    end_ = next_ + kStride * count;
    chunks_.push_back(next_);
    capacity_ += count;
  }
  static void recycle(Message* m) noexcept {
    T* obj = static_cast<T*>(m);
    obj->~T();
    instance().free_.push_back(obj);  // (reserved)
  }
  std::vector<void*> free_;
  std::vector<void*> chunks_;
  char* next_ = nullptr;  ///< the next message not yet carved from the newest chunk
  char* end_ = nullptr;
  std::size_t capacity_ = 0;  ///< messages the chunks hold
};

/// Create a pooled message of type T.
template <class T, class... Args>
Ref<T> make_message(Args&&... args) {
  return MessagePool<T>::instance().make(std::forward<Args>(args)...);
}

}  // namespace kbsim

// Messages as bytes for another process of a split run (split/crossing.hpp):
// a registered type comes back whole, from its own library's pool; a type that
// cannot cross, or bytes that are cut short or of an unknown type, are errors
// that name what is wrong.
#include "split/crossing.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness.hpp"

using ::testing::HasSubstr;

namespace kbsim {
namespace {

struct Unsaved final : Message {
  static constexpr std::string_view kName = "test.crossing.Unsaved";
  static constexpr TypeId kType = type_id(kName);
  Unsaved() : Message(kType) {}
};

std::string encode(const core::Registry& reg, const Message& m) {
  std::string out;
  ByteWriter w(out);
  core::encode_message(reg, m, w);
  return out;
}

TEST(Crossing, ABuiltinMessageComesBackWithItsBaseFieldsAndItsOwn) {
  const core::Registry& reg = test::shared_registry();
  const TypeId packet = type_id("endpoint.Packet");
  const MessageType* t = reg.message_type(packet);
  ASSERT_NE(t, nullptr) << "the endpoint plugin registers endpoint.Packet";
  Ref<Message> m = t->make();
  m->bytes = 4096;
  m->request_channel = true;
  // Its own field (sent_at) through its save/load: written as the sender's, read back into a fresh one.
  std::string own;
  ByteWriter ow(own);
  ow.put(Tick{12345});
  ByteReader or_(own);
  m->load(or_);
  const std::string bytes = encode(reg, *m);
  ByteReader r(bytes);
  Ref<Message> back = core::decode_message(reg, r);
  EXPECT_TRUE(r.done());
  EXPECT_EQ(back->type(), packet);
  EXPECT_EQ(back->type_name(), "endpoint.Packet");
  EXPECT_EQ(back->bytes, 4096u);
  EXPECT_TRUE(back->request_channel);
  EXPECT_EQ(encode(reg, *back), bytes) << "the same bytes again: sent_at came back too";
  ASSERT_NE(reg.message_type(type_id("mesh.Event")), nullptr);
}

TEST(Crossing, ATypeThatCannotCrossIsNamed) {
  const core::Registry& reg = test::shared_registry();
  Ref<Unsaved> m = make_message<Unsaved>();
  try {
    encode(reg, *m);
    FAIL() << "an unregistered type crossed";
  } catch (const SimError& e) {
    EXPECT_THAT(e.what(), HasSubstr("message type test.crossing.Unsaved cannot cross between processes: no plugin "
                                    "registers it (add_message)"));
  }
  std::string out;
  ByteWriter w(out);
  try {
    m->save(w);
    FAIL() << "the default save wrote something";
  } catch (const SimError& e) {
    EXPECT_THAT(e.what(), HasSubstr("test.crossing.Unsaved cannot cross between processes: it has no save/load"));
  }
}

TEST(Crossing, BytesCutShortOrOfAnUnknownTypeAreErrors) {
  const core::Registry& reg = test::shared_registry();
  Ref<Message> m = reg.message_type(type_id("endpoint.Packet"))->make();
  const std::string bytes = encode(reg, *m);
  ByteReader cut(std::string_view(bytes).substr(0, bytes.size() - 1));
  EXPECT_THROW(
      {
        try {
          core::decode_message(reg, cut);
        } catch (const SimError& e) {
          EXPECT_THAT(e.what(), HasSubstr("is cut short"));
          throw;
        }
      },
      SimError);
  std::string unknown;
  ByteWriter w(unknown);
  w.put(type_id("nobody.Knows"));
  ByteReader r(unknown);
  EXPECT_THROW(
      {
        try {
          core::decode_message(reg, r);
        } catch (const SimError& e) {
          EXPECT_THAT(e.what(), HasSubstr("which no plugin here registers"));
          throw;
        }
      },
      SimError);
}

}  // namespace
}  // namespace kbsim

// The party protocol's messages (src/federated/party_messages.hpp): encode/decode round
// trips, and every malformed block a peer could send is a FederationError naming it.
#include <gtest/gtest.h>

#include <string>

#include "federated/party_messages.hpp"

namespace flynn::federated {
namespace {

TEST(PartyMessages, HelloRoundTripsAndMalformedBlocksNameTheParty) {
  detail::Hello h;
  h.fingerprint = {{"m", "4096"}, {"variant", "zsign-q+paper"}};
  h.seed_given = true;
  h.seed = 5489;
  h.has_rows = true;
  h.rows_per_class = {10, 20, 30};
  const std::string bytes = detail::encode_hello(h);
  const detail::Hello back = detail::decode_hello(bytes, 0);
  EXPECT_EQ(detail::encode_hello(back), bytes);
  EXPECT_EQ(back.fingerprint, h.fingerprint);
  EXPECT_EQ(back.rows_per_class, h.rows_per_class);
  // Every truncation, and a forged field count, is refused without allocating by it.
  for (std::size_t n = 0; n < bytes.size(); ++n)
    EXPECT_THROW(detail::decode_hello(bytes.substr(0, n), 3), FederationError) << n;
  std::string forged = bytes;
  forged[16] = '\xff';  // the fingerprint's field count
  try {
    detail::decode_hello(forged, 3);
    FAIL() << "a forged length was accepted";
  } catch (const FederationError& e) {
    EXPECT_NE(std::string(e.what()).find("party 3"), std::string::npos) << e.what();
  }
  EXPECT_THROW(detail::decode_hello(bytes + "x", 1), FederationError);
}

TEST(PartyMessages, ReleaseHoldsExactlyTEntries) {
  const std::vector<DpEntry> entries = {{5, 1}, {9, 2}, {100, 7}};
  const std::string bytes = detail::encode_release(entries);
  const std::vector<DpEntry> back = detail::decode_release(bytes, 0, 3);
  ASSERT_EQ(back.size(), 3u);
  EXPECT_EQ(back[2].index, 100u);
  EXPECT_EQ(back[2].value, 7u);
  EXPECT_THROW(detail::decode_release(bytes, 0, 2), FederationError);
  EXPECT_THROW(detail::decode_release(bytes.substr(0, bytes.size() - 1), 0, 3), FederationError);
  EXPECT_THROW(detail::decode_release(bytes + "z", 0, 3), FederationError);
}

}  // namespace
}  // namespace flynn::federated

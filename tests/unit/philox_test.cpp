// The host Philox4x32-10 against Random123 (an independent implementation) and its published
// known-answer vectors; the counter layout against curand_init's.

#include <gtest/gtest.h>

#include <Random123/philox.h>

#include <random>

#include "kernels/rng/philox.hpp"

namespace lattica {
namespace {

PhiloxBlock random123(PhiloxCounter c, PhiloxKey k) {
  const r123::Philox4x32::ctr_type ctr = {{c.x, c.y, c.z, c.w}};
  const r123::Philox4x32::key_type key = {{k.x, k.y}};
  const r123::Philox4x32::ctr_type r = r123::Philox4x32()(ctr, key);
  return {r.v[0], r.v[1], r.v[2], r.v[3]};
}

void expect_block(PhiloxBlock got, PhiloxBlock want) {
  EXPECT_EQ(got.x, want.x);
  EXPECT_EQ(got.y, want.y);
  EXPECT_EQ(got.z, want.z);
  EXPECT_EQ(got.w, want.w);
}

TEST(Philox, KnownAnswerVectors) {
  // Random123's kat_vectors for philox4x32_10.
  expect_block(philox4x32_10_host({0, 0, 0, 0}, {0, 0}),
               {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8});
  expect_block(philox4x32_10_host({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
                                  {0xffffffff, 0xffffffff}),
               {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd});
  expect_block(philox4x32_10_host({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
                                  {0xa4093822, 0x299f31d0}),
               {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1});
}

TEST(Philox, HostEqualsRandom123OnRandomInputs) {
  std::mt19937_64 gen(12345);
  for (int i = 0; i < 100000; ++i) {
    const uint64_t a = gen(), b = gen(), c = gen();
    const PhiloxCounter ctr{uint32_t(a), uint32_t(a >> 32), uint32_t(b), uint32_t(b >> 32)};
    const PhiloxKey key{uint32_t(c), uint32_t(c >> 32)};
    const PhiloxBlock want = random123(ctr, key);
    const PhiloxBlock got = philox4x32_10(ctr, key);
    ASSERT_TRUE(got.x == want.x && got.y == want.y && got.z == want.z && got.w == want.w)
        << "input " << i;
  }
}

TEST(Philox, CounterLayoutMatchesCurandInit) {
  // curand_init(seed, subsequence, offset) keys with the seed and counts offset/4 into the low
  // 64 bits and subsequence into the high 64 bits of the counter.
  const uint64_t seed = 0x0123456789abcdefULL, site = 0x000000A876543210ULL,
                 step = 0xFEDCBA9876543210ULL;
  const PhiloxKey k = philox_key(seed);
  EXPECT_EQ(k.x, 0x89abcdefu);
  EXPECT_EQ(k.y, 0x01234567u);
  const PhiloxCounter c = philox_counter(RngStream::initial_state, 0xBEEF, site, step);
  EXPECT_EQ(c.x, 0x76543210u);
  EXPECT_EQ(c.y, 0xFEDCBA98u);
  EXPECT_EQ(c.z, 0x76543210u);
  EXPECT_EQ(c.w, 0xBEEF0000u | (1u << 8) | 0xA8u);
}

TEST(Philox, StreamsSitesAndStepsGiveDifferentNumbers) {
  const uint32_t base = philox_u32(7, RngStream::site_update, 0, 5, 9);
  EXPECT_NE(base, philox_u32(8, RngStream::site_update, 0, 5, 9));
  EXPECT_NE(base, philox_u32(7, RngStream::initial_state, 0, 5, 9));
  EXPECT_NE(base, philox_u32(7, RngStream::site_update, 1, 5, 9));
  EXPECT_NE(base, philox_u32(7, RngStream::site_update, 0, 6, 9));
  EXPECT_NE(base, philox_u32(7, RngStream::site_update, 0, 5, 10));
  EXPECT_EQ(base, philox_u32(7, RngStream::site_update, 0, 5, 9));
}

TEST(Philox, WordsAreUniform) {
  // Chi-square of the top 4 bits over 16 bins: 15 degrees of freedom, 1e-6 false-alarm bound.
  std::vector<double> counts(16, 0.0);
  const int n = 1 << 20;
  for (int i = 0; i < n; ++i)
    counts[philox_u32(99, RngStream::site_update, 0, static_cast<uint64_t>(i), 3) >> 28] += 1;
  double chi2 = 0;
  for (double c : counts) chi2 += (c - n / 16.0) * (c - n / 16.0) / (n / 16.0);
  EXPECT_LT(chi2, 60.0);
}

}  // namespace
}  // namespace lattica

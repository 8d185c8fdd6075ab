// Checkerboard geometry against plain coordinate arithmetic.

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "kernels/common/fast_divisor.hpp"
#include "kernels/lattice/checkerboard.hpp"

namespace lattica {
namespace {

template <int D>
void check_geometry(std::vector<int64_t> dims) {
  const Checkerboard<D> g = Checkerboard<D>::make(dims.data());
  int64_t volume = 1;
  for (int64_t l : dims) volume *= l;
  ASSERT_EQ(g.volume(), volume);

  auto coords = [&](int64_t i) {
    std::vector<int64_t> x(D);
    for (int a = D - 1; a >= 0; --a) {
      x[a] = i % dims[a];
      i /= dims[a];
    }
    return x;
  };
  auto lex = [&](const std::vector<int64_t>& x) {
    int64_t i = 0;
    for (int a = 0; a < D; ++a) i = i * dims[a] + x[a];
    return i;
  };

  // storage_index is a bijection onto [0, V) that puts colour (sum of coordinates) mod 2 first.
  std::vector<int64_t> storage(volume);
  std::set<int64_t> seen;
  for (int64_t i = 0; i < volume; ++i) {
    storage[i] = g.storage_index(i);
    const auto x = coords(i);
    int64_t sum = 0;
    for (int64_t c : x) sum += c;
    EXPECT_EQ(storage[i] >= g.half_volume, sum % 2 == 1) << "site " << i;
    seen.insert(storage[i]);
    const int colour = storage[i] >= g.half_volume;
    EXPECT_EQ(g.lex_index(storage[i] - colour * g.half_volume, colour), i);
  }
  EXPECT_EQ(static_cast<int64_t>(seen.size()), volume);
  EXPECT_EQ(*seen.rbegin(), volume - 1);

  // visit_neighbours yields exactly the 2D periodic neighbours, in the order +0, -0, +1, ...
  for (int64_t i = 0; i < volume; ++i) {
    const int colour = storage[i] >= g.half_volume;
    const int64_t j = storage[i] - colour * g.half_volume;
    std::vector<int64_t> got;
    const int64_t site = g.visit_neighbours(
        j, colour, [&](int64_t k) { got.push_back((1 - colour) * g.half_volume + k); });
    EXPECT_EQ(site, i);
    std::vector<int64_t> want;
    const auto x = coords(i);
    for (int a = 0; a < D; ++a) {
      for (int step : {1, -1}) {
        auto y = x;
        y[a] = (y[a] + step + dims[a]) % dims[a];
        want.push_back(storage[lex(y)]);
      }
    }
    EXPECT_EQ(got, want) << "site " << i;
  }

  // The GPU's 32-bit arithmetic (Index uint32_t, fits_32_bits) locates every site and run as
  // the 64-bit one does.
  ASSERT_TRUE(g.fits_32_bits());
  for (int colour = 0; colour < 2; ++colour) {
    for (int64_t j = 0; j < g.half_volume; ++j) {
      const auto wide = g.template locate_run<1>(j, colour);
      const auto narrow =
          g.template locate_run<1, false, uint32_t>(static_cast<uint32_t>(j), colour);
      EXPECT_EQ(narrow.parity, wide.parity) << "site " << j << " colour " << colour;
      EXPECT_EQ(int64_t{narrow.site}, wide.site) << "site " << j << " colour " << colour;
      for (int k = 0; k < 2 * D; ++k)
        EXPECT_EQ(int64_t{narrow.other[k]}, wide.other[k]) << "site " << j << ", neighbour " << k;
      if (g.half_last % 2 == 0 && j % 2 == 0) {
        const auto wide2 = g.template locate_run<2>(j, colour);
        const auto narrow2 =
            g.template locate_run<2, false, uint32_t>(static_cast<uint32_t>(j), colour);
        for (int k = 0; k < 2 * D; ++k)
          EXPECT_EQ(int64_t{narrow2.other[k]}, wide2.other[k]) << "run of 2 at " << j;
      }
    }
  }

  // locate_run names the same neighbours and sites for each site of a run as visit_neighbours.
  constexpr int kRun = 4;
  if (g.half_last % kRun != 0) return;
  for (int colour = 0; colour < 2; ++colour) {
    for (int64_t j = 0; j < g.half_volume; j += kRun) {
      const auto run = g.template locate_run<kRun>(j, colour);
      for (int r = 0; r < kRun; ++r) {
        std::vector<int64_t> got, want;
        for (int k = 0; k < 2 * D - 2; ++k) got.push_back(run.other[k] + r);
        const int64_t pair = run.other[2 * D - 2] + r, beside = run.other[2 * D - 1];
        const int64_t up = r + 1 < kRun ? pair + 1 : beside, down = r > 0 ? pair - 1 : beside;
        got.push_back(run.parity ? up : pair);
        got.push_back(run.parity ? pair : down);
        EXPECT_EQ(run.site + 2 * r,
                  g.visit_neighbours(j + r, colour, [&](int64_t k) { want.push_back(k); }));
        EXPECT_EQ(got, want) << "run " << j << " site " << r << " colour " << colour;
      }
    }
  }
}

TEST(Checkerboard, TwoDimensions) {
  check_geometry<2>({4, 4});
  check_geometry<2>({6, 10});
  check_geometry<2>({2, 8});
  check_geometry<2>({8, 2});
  check_geometry<2>({4, 16});  // runs of 4 (locate_run): two per row
}

TEST(Checkerboard, ThreeDimensions) {
  check_geometry<3>({4, 6, 8});
  check_geometry<3>({2, 2, 2});
  check_geometry<3>({4, 2, 2});
  check_geometry<3>({2, 4, 24});
}

TEST(Checkerboard, FourDimensions) {
  check_geometry<4>({4, 4, 6, 2});
  check_geometry<4>({2, 2, 2, 2});
}

TEST(Checkerboard, GatherWritesLexicographicOrder) {
  const std::vector<int64_t> dims{4, 6};
  const Checkerboard<2> g = Checkerboard<2>::make(dims.data());
  std::vector<int> storage(24), lexicographic(24, -1);
  for (int64_t i = 0; i < 24; ++i) storage[g.storage_index(i)] = static_cast<int>(i);
  const GatherLexicographic<2, int> gather{g, storage.data(), lexicographic.data()};
  for (int64_t i = 0; i < 24; ++i) gather(i);
  for (int i = 0; i < 24; ++i) EXPECT_EQ(lexicographic[i], i);
}

}  // namespace
}  // namespace lattica

// ---- FastDivisor: the packed Ising kernel's index arithmetic ----

namespace lattica {
namespace {

/// The test numbers of the divisor tests: splitmix64.
struct SplitMix64 {
  uint64_t state;
  uint64_t operator()() {
    state += 0x9E3779B97F4A7C15ULL;
    uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
};

TEST(FastDivisor, ExactForEveryDivisorShapeAndEdgeNumerator) {
  std::vector<uint32_t> divisors{
      1,     2,       3,           5,           6,           7,           31,         32,    33,
      64,    100,     641,         1024,        4095,        4096,        4097,       65535, 65536,
      65537, 1000003, 0x7FFFFFFFu, 0x80000000u, 0x80000001u, 0xFFFFFFFEu, 0xFFFFFFFFu};
  SplitMix64 next{12345};
  for (int i = 0; i < 200; ++i)
    divisors.push_back(static_cast<uint32_t>(next() >> (next() % 32)) | 1u);
  for (uint32_t d : divisors) {
    const FastDivisor f = FastDivisor::make(d);
    std::vector<uint32_t> numerators{0,           1,           d - 1,      d,
                                     d + 1,       2 * d - 1,   2 * d,      0xFFFFFFFFu,
                                     0xFFFFFFFEu, 0x80000000u, 0x7FFFFFFFu};
    for (int i = 0; i < 2000; ++i) numerators.push_back(static_cast<uint32_t>(next()));
    for (uint32_t n : numerators) ASSERT_EQ(f.divide(n), n / d) << n << " / " << d;
  }
}

}  // namespace
TEST(FastDivisor64, ExactForEveryDivisorShapeAndEdgeNumerator) {
  std::vector<uint64_t> divisors{1,
                                 2,
                                 3,
                                 7,
                                 64,
                                 4097,
                                 65536,
                                 0xFFFFFFFFULL,
                                 0x100000000ULL,
                                 0x100000001ULL,
                                 (uint64_t(1) << 40) + 3,
                                 0x7FFFFFFFFFFFFFFFULL,
                                 0x8000000000000000ULL,
                                 0x8000000000000001ULL,
                                 0xFFFFFFFFFFFFFFFFULL};
  SplitMix64 next{54321};
  for (int i = 0; i < 300; ++i) divisors.push_back((next() >> (next() % 64)) | 1u);
  for (uint64_t d : divisors) {
    const FastDivisor64 f = FastDivisor64::make(d);
    std::vector<uint64_t> numerators{0,     1,     d - 1, d,          d + 1,           2 * d - 1,
                                     2 * d, ~0ULL, ~1ULL, 1ULL << 63, (1ULL << 63) - 1};
    for (int i = 0; i < 2000; ++i) numerators.push_back(next() >> (next() % 64));
    for (uint64_t n : numerators) ASSERT_EQ(f.divide(n), n / d) << n << " / " << d;
  }
}

}  // namespace lattica

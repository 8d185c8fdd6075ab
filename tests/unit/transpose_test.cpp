// Host transposes, axis permutations and checkerboard <-> lexicographic permutations
// (kernels/transpose/transpose.hpp) against naive index arithmetic written out here.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "kernels/lattice/checkerboard.hpp"
#include "kernels/transpose/transpose.hpp"

namespace lattica {
namespace {

// Values that encode their position: element i of an input holds i (int64_t, so every
// position is distinct).
std::vector<int64_t> iota_field(int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), int64_t{0});
  return v;
}

// Naive permutation: walks the input, computes each element's coordinates and the output
// position they name.
std::vector<int64_t> naive_permute(const std::vector<int64_t>& in,
                                   const std::vector<int64_t>& extents,
                                   const std::vector<int>& perm) {
  const int rank = static_cast<int>(extents.size());
  std::vector<int64_t> out(in.size());
  std::vector<int64_t> x(rank);
  for (size_t i = 0; i < in.size(); ++i) {
    int64_t rest = static_cast<int64_t>(i);
    for (int a = rank - 1; a >= 0; --a) {
      x[a] = rest % extents[a];
      rest /= extents[a];
    }
    int64_t o = 0;
    for (int k = 0; k < rank; ++k) o = o * extents[perm[k]] + x[perm[k]];
    out[static_cast<size_t>(o)] = in[i];
  }
  return out;
}

void check_permutation(const std::vector<int64_t>& extents, const std::vector<int>& perm) {
  int64_t n = 1;
  for (int64_t e : extents) n *= e;
  const auto in = iota_field(n);
  std::vector<int64_t> out(static_cast<size_t>(n), -1);
  permute_axes_host(in.data(), out.data(), static_cast<int>(extents.size()), extents.data(),
                    perm.data());
  ASSERT_EQ(out, naive_permute(in, extents, perm))
      << ::testing::PrintToString(extents) << " " << ::testing::PrintToString(perm);
}

TEST(Transpose, TwoDimensionalMatchesNaiveForAllShapes) {
  const std::vector<std::pair<int64_t, int64_t>> shapes{
      {1, 1}, {1, 17}, {17, 1}, {31, 33}, {32, 32}, {33, 31}, {1000, 7}, {7, 1000}, {4097, 3}};
  for (int64_t batch : {1, 3}) {
    for (auto [rows, cols] : shapes) {
      const auto in = iota_field(batch * rows * cols);
      std::vector<int64_t> out(in.size(), -1);
      transpose_2d_host(in.data(), out.data(), batch, rows, cols);
      for (int64_t b = 0; b < batch; ++b) {
        for (int64_t r = 0; r < rows; ++r) {
          for (int64_t c = 0; c < cols; ++c) {
            ASSERT_EQ(out[static_cast<size_t>((b * cols + c) * rows + r)],
                      (b * rows + r) * cols + c)
                << batch << " x " << rows << " x " << cols;
          }
        }
      }
      // The transpose of the transpose is the input.
      std::vector<int64_t> back(in.size(), -1);
      transpose_2d_host(out.data(), back.data(), batch, cols, rows);
      ASSERT_EQ(back, in);
    }
  }
}

TEST(Transpose, EveryPermutationOfRanksTwoToFive) {
  // Extents of 1 and 2 exercise the normalisation; 5 x 3 x 4 x 2 x 3 is 360 elements.
  const std::vector<std::vector<int64_t>> shapes{{3, 5},          {1, 6},         {4, 3, 5},
                                                 {2, 1, 7},       {3, 4, 2, 5},   {2, 1, 3, 1},
                                                 {5, 3, 4, 2, 3}, {2, 1, 3, 1, 4}};
  for (const auto& extents : shapes) {
    std::vector<int> perm(extents.size());
    std::iota(perm.begin(), perm.end(), 0);
    do {
      check_permutation(extents, perm);
    } while (std::next_permutation(perm.begin(), perm.end()));
  }
}

TEST(Transpose, LargeSizesUseBlocksAndThreads) {
  // Past the OpenMP threshold and not a multiple of the cache block.
  check_permutation({300, 257}, {1, 0});
  check_permutation({40, 33, 50}, {2, 1, 0});
  check_permutation({6, 50, 70, 3}, {3, 0, 2, 1});
}

TEST(Transpose, NormalizationMergesAndDropsAxes) {
  {
    // AoS [V][n] -> SoA [n][V] with unit axes around it is a plain 2-D transpose.
    const int64_t extents[4] = {1, 1000, 1, 3};
    const int perm[4] = {3, 2, 0, 1};
    const PermuteShape s = normalize_permutation(4, extents, perm);
    ASSERT_EQ(s.rank, 2);
    EXPECT_EQ(s.extent[0], 1000);
    EXPECT_EQ(s.extent[1], 3);
    EXPECT_EQ(s.perm[0], 1);
    EXPECT_EQ(s.perm[1], 0);
    EXPECT_EQ(s.volume, 3000);
    EXPECT_EQ(s.in_stride(0), 3);
    EXPECT_EQ(s.out_stride(0), 1);
    EXPECT_EQ(s.out_stride(1), 1000);
  }
  {
    // [a][b][c][d] -> [c][d][a][b]: two merged groups.
    const int64_t extents[4] = {2, 3, 4, 5};
    const int perm[4] = {2, 3, 0, 1};
    const PermuteShape s = normalize_permutation(4, extents, perm);
    ASSERT_EQ(s.rank, 2);
    EXPECT_EQ(s.extent[0], 6);
    EXPECT_EQ(s.extent[1], 20);
    EXPECT_EQ(s.perm[0], 1);
  }
  {
    // Identity and all-unit shapes are copies.
    const int64_t extents[3] = {2, 3, 4};
    const int perm[3] = {0, 1, 2};
    EXPECT_EQ(normalize_permutation(3, extents, perm).rank, 1);
    const int64_t units[2] = {1, 1};
    const int swap[2] = {1, 0};
    const PermuteShape s = normalize_permutation(2, units, swap);
    EXPECT_EQ(s.rank, 0);
    EXPECT_EQ(s.volume, 1);
  }
  {
    const int64_t extents[2] = {0, 5};
    const int swap[2] = {1, 0};
    EXPECT_EQ(normalize_permutation(2, extents, swap).volume, 0);
  }
}

TEST(Transpose, RejectsBadPermutations) {
  const int64_t extents[6] = {2, 2, 2, 2, 2, 2};
  const int repeated[2] = {0, 0};
  const int out_of_range[2] = {0, 2};
  const int six[6] = {0, 1, 2, 3, 4, 5};
  const int64_t negative[2] = {-1, 2};
  const int swap[2] = {1, 0};
  EXPECT_THROW(normalize_permutation(2, extents, repeated), std::invalid_argument);
  EXPECT_THROW(normalize_permutation(2, extents, out_of_range), std::invalid_argument);
  EXPECT_THROW(normalize_permutation(6, extents, six), std::invalid_argument);
  EXPECT_THROW(normalize_permutation(0, extents, six), std::invalid_argument);
  EXPECT_THROW(normalize_permutation(2, negative, swap), std::invalid_argument);
}

// Checkerboard storage position of lexicographic site i, from coordinates alone: colour
// (sum of coordinates) mod 2 first, then i / 2 inside the colour.
template <int D>
int64_t naive_storage_index(const std::vector<int64_t>& dims, int64_t i) {
  int64_t rest = i, sum = 0, volume = 1;
  for (int a = D - 1; a >= 0; --a) {
    sum += rest % dims[a];
    rest /= dims[a];
    volume *= dims[a];
  }
  return (sum % 2) * (volume / 2) + i / 2;
}

template <int D>
void check_checkerboard(const std::vector<int64_t>& dims, int64_t copies) {
  const Checkerboard<D> lattice = Checkerboard<D>::make(dims.data());
  const int64_t volume = lattice.volume();
  const auto lexicographic = iota_field(copies * volume);
  std::vector<int64_t> storage(lexicographic.size(), -1);
  lexicographic_to_checkerboard_host(lattice, lexicographic.data(), storage.data(), copies);
  for (int64_t c = 0; c < copies; ++c) {
    for (int64_t i = 0; i < volume; ++i) {
      ASSERT_EQ(storage[static_cast<size_t>(c * volume + naive_storage_index<D>(dims, i))],
                c * volume + i)
          << ::testing::PrintToString(dims) << " copy " << c << " site " << i;
    }
  }
  std::vector<int64_t> back(lexicographic.size(), -1);
  checkerboard_to_lexicographic_host(lattice, storage.data(), back.data(), copies);
  ASSERT_EQ(back, lexicographic) << ::testing::PrintToString(dims);
  // The existing per-site gather functor agrees.
  std::vector<int64_t> gathered(lexicographic.size(), -1);
  const GatherLexicographic<D, int64_t> gather{lattice, storage.data(), gathered.data()};
  for (int64_t i = 0; i < copies * volume; ++i) gather(i);
  ASSERT_EQ(gathered, lexicographic);
}

TEST(Transpose, CheckerboardRoundTripsInOneToFourDimensions) {
  for (int64_t copies : {1, 3}) {
    check_checkerboard<1>({6}, copies);
    check_checkerboard<1>({16}, copies);
    check_checkerboard<2>({2, 10}, copies);
    check_checkerboard<2>({6, 16}, copies);
    check_checkerboard<3>({4, 6, 2}, copies);
    check_checkerboard<3>({2, 6, 10}, copies);
    check_checkerboard<4>({2, 4, 6, 2}, copies);
    check_checkerboard<4>({4, 2, 2, 8}, copies);
  }
  check_checkerboard<2>({128, 130}, 2);  // past the OpenMP threshold
}

TEST(Transpose, CheckerboardRowParity) {
  // Row r of a 4 x 6 x 8 lattice, copy 2: coordinates (r / 6 % 4, r % 6), parity of their sum.
  const int64_t dims[3] = {4, 6, 8};
  const auto rows = CheckerboardRows<int64_t>::make(Checkerboard<3>::make(dims));
  for (int64_t r = 0; r < 24; ++r) {
    int64_t copy = -1;
    EXPECT_EQ(rows.parity(2 * 24 + r, copy), static_cast<int>((r / 6 + r % 6) % 2)) << r;
    EXPECT_EQ(copy, 2);
  }
  const int64_t odd_last[2] = {4, 5};
  Checkerboard<2> bad = Checkerboard<2>::make(odd_last);
  EXPECT_THROW(CheckerboardRows<int64_t>::make(bad), std::invalid_argument);
}

}  // namespace
}  // namespace lattica

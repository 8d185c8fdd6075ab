// The CPU's vector update of the packed Ising storage (kernels/models/ising_packed_lanes.hpp)
// against the one-word functor the GPU runs (PackedIsingUpdate), word for word and sum for sum,
// with every lane type this machine runs (the portable fallback, SSE2 and, where the CPU has
// it, AVX2): rows longer and shorter than a batch and not dividing it, 1 to 4 dimensions,
// fields, both algorithms, blocks of rows of a box (consecutive and not), and site names that
// cross 2^32 inside a batch (Philox counters whose low word wraps).

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/models/ising_packed_lanes.hpp"

namespace lattica {
namespace {

/// Random words (xorshift), the same for every run.
std::vector<uint32_t> random_words(int64_t n, uint64_t seed) {
  std::vector<uint32_t> words(static_cast<size_t>(n));
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (uint32_t& w : words) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    w = static_cast<uint32_t>(x >> 16);
  }
  return words;
}

/// Runs `sweeps` sweeps over the rows `rows` of `lattice` (two colours each, the second with
/// sums) with the one-word functor and with PackedIsingLanes on every lane type, from the same
/// random words, and requires the same words and sums after every colour.
template <int D, int kSlots, bool kBoxed>
void expect_lanes_follow_words(const Checkerboard<D>& lattice, const RowBlock<D>& rows,
                               const IsingParams& params, bool heatbath, int sweeps,
                               const std::string& name) {
  SCOPED_TRACE(name);
  const PackedLattice<D> g = PackedLattice<D>::make(lattice);
  PackedFlipClasses<D, kSlots> classes;
  ASSERT_TRUE((PackedFlipClasses<D, kSlots>::make(params.flip_threshold[heatbath], classes)));
  const std::vector<uint32_t> start = random_words(2 * g.words, params.seed);
  std::vector<uint32_t> want = start;
  std::vector<std::vector<uint32_t>> got(3, start);
  for (int sweep = 0; sweep < sweeps; ++sweep) {
    for (int colour = 0; colour < 2; ++colour) {
      const uint64_t step = update_step(static_cast<uint64_t>(sweep), 1, 0);
      const PackedIsingUpdate<D, kSlots, kBoxed> reference{g, classes, params.seed, want.data(),
                                                           3, colour,  step};
      IsingSums want_sums{0, 0};
      for (uint32_t r = 0; r < rows.rows; ++r) {
        for (uint32_t w = 0; w < g.row_words; ++w) {
          want_sums = want_sums + reference.update_and_sum(rows.row(r) * g.row_words + w);
        }
      }
      for (int kind = 0; kind < 3; ++kind) {
        if (kind == 2 && !cpu_has_avx2()) continue;
        PackedIsingUpdate<D, kSlots, kBoxed> update = reference;
        update.spins = got[kind].data();
        const auto lanes = PackedIsingLanes<D, kSlots, kBoxed, true>::make(update, rows);
        IsingSums sums{0, 0};
        for (int64_t c = 0; c < lanes.chunks(); ++c) {
#if defined(LATTICA_CPU_LANES_AVX2)
          if (kind == 2) {
            sums = sums + run_avx2_lanes(lanes, c);
            continue;
          }
#endif
          sums = sums + (kind == 0 ? lanes.template run<GenericLanes>(c)
                                   : lanes.template run<BaseLanes>(c));
        }
        const char* lanes_name = kind == 0 ? "generic" : kind == 1 ? "base" : "avx2";
        ASSERT_EQ(got[kind], want)
            << lanes_name << " lanes, sweep " << sweep << ", colour " << colour;
        ASSERT_EQ(sums.bonds, want_sums.bonds) << lanes_name << " lanes";
        ASSERT_EQ(sums.magnetization, want_sums.magnetization) << lanes_name << " lanes";
      }
    }
  }
  EXPECT_NE(want, start);  // the chain moved
}

/// The whole lattice of `dims`.
template <int D, int kSlots>
void expect_whole(const int64_t (&dims)[D], double beta, double h, bool heatbath, int sweeps) {
  const Checkerboard<D> lattice = Checkerboard<D>::make(dims);
  const int64_t first[D] = {};
  std::string name = std::to_string(D) + "D";
  for (int a = 0; a < D; ++a) name += (a ? "x" : " ") + std::to_string(dims[a]);
  name += heatbath ? " heat bath" : " Metropolis";
  expect_lanes_follow_words<D, kSlots, false>(
      lattice, RowBlock<D>::make(lattice, first, lattice.extent),
      make_ising_params(D, beta, h, 97 + static_cast<uint64_t>(dims[0])), heatbath, sweeps, name);
}

TEST(PackedLanes, WholeLattices) {
  // Rows of 1, 2, 3, 4, 5, 8 and 16 words per colour; the fewest class slots that fit.
  expect_whole<2, 3>({64, 2048}, 0.44068679350977151, 0.0, false, 4);
  expect_whole<2, 5>({32, 1024}, 0.44068679350977151, 0.0, true, 4);
  expect_whole<2, 10>({6, 192}, 0.5, -0.3, true, 6);
  expect_whole<2, 3>({10, 320}, 0.3, 0.0, false, 6);
  expect_whole<2, 10>({14, 64}, 0.6, 0.25, false, 6);
  expect_whole<3, 4>({16, 16, 128}, 0.2216544, 0.0, false, 4);
  expect_whole<3, 7>({8, 12, 256}, 0.2216544, 0.0, true, 4);
  expect_whole<3, 14>({6, 10, 64}, 0.3, 0.2, false, 6);
  expect_whole<3, 14>({4, 6, 512}, 0.25, -0.1, true, 4);
  expect_whole<4, 5>({4, 6, 4, 128}, 0.15, 0.0, false, 4);
  expect_whole<4, 18>({2, 4, 6, 64}, 0.2, -0.2, true, 6);
  expect_whole<1, 6>({256}, 0.5, 0.3, false, 8);
  expect_whole<1, 3>({1024}, 0.8, 0.0, true, 8);
}

TEST(PackedLanes, BlocksOfABoxAndSiteNamesAcross2To32) {
  // A box of a lattice of 2^33 sites whose sites' names cross 2^32 at global x0 = 2^25: its
  // interior rows (consecutive) and a block of rows with ghosts around it (not consecutive).
  {
    const int64_t global[2] = {int64_t(1) << 26, 128}, extents[2] = {12, 128};
    const int64_t origin[2] = {(int64_t(1) << 25) - 6, 0}, ghosts[2] = {1, 0};
    const auto box = Checkerboard<2>::make_box(extents, global, origin, ghosts);
    const int64_t first[2] = {1, 0}, count[2] = {10, 0};
    const auto interior = RowBlock<2>::make(box, first, count);
    ASSERT_TRUE(interior.contiguous);
    expect_lanes_follow_words<2, 3, true>(box, interior, make_ising_params(2, 0.44, 0.0, 5), false,
                                          3, "2D box across 2^32");
    expect_lanes_follow_words<2, 10, true>(box, interior, make_ising_params(2, 0.5, 0.2, 6), true,
                                           3, "2D box across 2^32, field");
  }
  {
    const int64_t global[3] = {int64_t(1) << 21, 32, 128}, extents[3] = {6, 34, 128};
    const int64_t origin[3] = {(int64_t(1) << 20) - 3, -1, 0}, ghosts[3] = {1, 1, 0};
    const auto box = Checkerboard<3>::make_box(extents, global, origin, ghosts);
    const int64_t slab_first[3] = {1, 0, 0}, slab_count[3] = {4, 34, 0};
    const auto slab = RowBlock<3>::make(box, slab_first, slab_count);
    ASSERT_TRUE(slab.contiguous);
    const int64_t first[3] = {1, 1, 0}, count[3] = {4, 32, 0};
    const auto interior = RowBlock<3>::make(box, first, count);
    ASSERT_FALSE(interior.contiguous);
    const IsingParams params = make_ising_params(3, 0.2216544, 0.0, 8);
    expect_lanes_follow_words<3, 4, true>(box, interior, params, false, 3,
                                          "3D box across 2^32, interior");
    expect_lanes_follow_words<3, 7, true>(box, interior, params, true, 3,
                                          "3D box across 2^32, interior, heat bath");
    // Whole rows of the slab's planes, ghost rows included (their names are not a box's
    // interior's, but both updates name them alike).
    expect_lanes_follow_words<3, 4, true>(box, slab, params, false, 3, "3D box, slab rows");
  }
}

/// The runs of words a GPU thread updates (PackedIsingUpdate::update_run, kRun words of a row
/// sharing one locate and the run's neighbour words) against the one-word update, word for word
/// and sum for sum, over `sweeps` sweeps of both colours of the whole lattice.
template <int D, int kSlots, int kRun>
void expect_runs_follow_words(const int64_t (&dims)[D], double beta, double h, bool heatbath,
                              int sweeps) {
  const Checkerboard<D> lattice = Checkerboard<D>::make(dims);
  const PackedLattice<D> g = PackedLattice<D>::make(lattice);
  std::string name = std::to_string(D) + "D run of " + std::to_string(kRun);
  for (int a = 0; a < D; ++a) name += (a ? "x" : " ") + std::to_string(dims[a]);
  SCOPED_TRACE(name + (heatbath ? " heat bath" : " Metropolis"));
  ASSERT_EQ(g.row_words % kRun, 0u);
  const IsingParams params = make_ising_params(D, beta, h, 11 + static_cast<uint64_t>(dims[0]));
  PackedFlipClasses<D, kSlots> classes;
  ASSERT_TRUE((PackedFlipClasses<D, kSlots>::make(params.flip_threshold[heatbath], classes)));
  const std::vector<uint32_t> start = random_words(2 * g.words, params.seed + 1);
  std::vector<uint32_t> want = start, got = start;
  for (int sweep = 0; sweep < sweeps; ++sweep) {
    for (int colour = 0; colour < 2; ++colour) {
      const uint64_t step = update_step(static_cast<uint64_t>(sweep), 0, 0);
      const PackedIsingUpdate<D, kSlots> word{g, classes, params.seed, want.data(),
                                              5, colour,  step};
      PackedIsingUpdate<D, kSlots> run = word;
      run.spins = got.data();
      IsingSums want_sums{0, 0}, sums{0, 0};
      for (uint32_t k = 0; k < g.words; ++k) want_sums = want_sums + word.update_and_sum(k);
      for (uint32_t k = 0; k < g.words; k += kRun) {
        // The second colour with sums, the first without (PackedIsingRunUpdate's path).
        if (colour == 1) {
          sums = sums + PackedIsingUpdateSums<D, kSlots, false, kRun>{run}(k / kRun);
        } else {
          PackedIsingRunUpdate<D, kSlots, kRun>{run}(k / kRun);
        }
      }
      ASSERT_EQ(got, want) << "sweep " << sweep << ", colour " << colour;
      if (colour == 1) {
        ASSERT_EQ(sums.bonds, want_sums.bonds);
        ASSERT_EQ(sums.magnetization, want_sums.magnetization);
      }
    }
  }
  EXPECT_NE(want, start);  // the chain moved
}

TEST(PackedRuns, FollowTheOneWordUpdate) {
  // Runs of 2, 4 and 8 words; rows of as many words as a run and of several runs; 1 to 4
  // dimensions, fields, both algorithms.
  expect_runs_follow_words<2, 3, 4>({64, 256}, 0.44068679350977151, 0.0, false, 4);
  expect_runs_follow_words<2, 3, 4>({32, 1024}, 0.44068679350977151, 0.0, false, 4);
  expect_runs_follow_words<2, 5, 4>({32, 512}, 0.44068679350977151, 0.0, true, 4);
  expect_runs_follow_words<2, 10, 2>({6, 384}, 0.5, -0.3, true, 6);
  expect_runs_follow_words<2, 3, 8>({10, 1024}, 0.3, 0.0, false, 6);
  expect_runs_follow_words<3, 4, 4>({8, 6, 256}, 0.2216544, 0.0, false, 4);
  expect_runs_follow_words<3, 14, 4>({4, 6, 512}, 0.25, -0.1, true, 4);
  expect_runs_follow_words<4, 18, 2>({2, 4, 6, 128}, 0.2, -0.2, true, 6);
  expect_runs_follow_words<1, 6, 4>({1024}, 0.5, 0.3, false, 8);
}

}  // namespace
}  // namespace lattica

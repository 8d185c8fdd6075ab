// Boxes of a larger lattice (Checkerboard::make_box), the geometry of domain decomposition, on
// the CPU backend (tests/support/box_check.hpp): a box's interior follows the whole lattice for
// every model, the byte and the multi-spin kernels, boxes that wrap around the periodic
// boundary, and several passes and sweeps.

#include <gtest/gtest.h>

#include <array>

#include "kernels/backend/cpu_exec.hpp"
#include "kernels/models/on.hpp"
#include "kernels/models/phi4.hpp"
#include "kernels/models/potts.hpp"
#include "tests/support/box_check.hpp"

namespace lattica::test {
namespace {

/// Every site of the box, ghosts included, is named as the whole lattice names it, and the
/// cheaper naming of the interior agrees on interior sites.
void expect_global_names(const Box<3>& box) {
  int64_t interior_sites = 0;
  for (int64_t i = 0; i < box.local.volume(); ++i) {
    bool interior = false;
    const int64_t w = box.whole_position(i, interior);
    const int colour = i >= box.local.half_volume;
    const int64_t j = i - colour * box.local.half_volume;
    // The same site, named by its whole-lattice lexicographic index, of the flipped colour.
    const int whole_colour = w >= box.whole.half_volume;
    const int64_t name =
        box.whole.lex_index(w - whole_colour * box.whole.half_volume, whole_colour);
    EXPECT_EQ(box.local.site_index<true>(j, colour), name);
    EXPECT_EQ(whole_colour, colour ^ box.local.colour_flip());
    if (interior) {
      ++interior_sites;
      int64_t x[3], h;
      const int p = box.local.decompose(j, colour, x, h);
      EXPECT_EQ(box.local.interior_site(x, 2 * j + p), name) << "local site " << i;
    }
  }
  EXPECT_GT(interior_sites, 0);
}

TEST(Box, GlobalSiteNamesTheWholeLatticesSite) {
  const int64_t global[3] = {6, 8, 10};
  const Box<3> box(global, {3, 2, 1}, {2, 1, 0});  // wraps along axis 0: rows 3 .. 6 (= 0)
  EXPECT_EQ(box.local.extent[0], 4);
  EXPECT_EQ(box.local.extent[1], 6);
  EXPECT_EQ(box.local.colour_flip(), (3 + 3) & 1);
  expect_global_names(box);
  // Slabs (split along axis 0 only): the first box's lower ghost and the last box's upper ghost
  // wrap around; the interior's names are the local index plus an offset.
  for (int index : {0, 1, 2}) {
    const Box<3> slab(global, {3, 1, 1}, {index, 0, 0});
    for (int a = 0; a < 3; ++a) EXPECT_EQ(slab.local.stride_gap[a], 0);
    expect_global_names(slab);
  }
  // Boxes of 2 with their ghosts span the whole axis (4 = 4) and still wrap.
  const int64_t small[3] = {4, 4, 6};
  for (int index : {0, 1}) expect_global_names(Box<3>(small, {2, 2, 1}, {index, 1 - index, 0}));
}

TEST(Box, IsingInteriorFollowsTheWholeLattice) {
  const CpuExec exec(2);
  const int64_t global[3] = {8, 6, 64};
  const IsingParams params = make_ising_params(3, 0.25, 0.1, 99);
  for (const auto& index : {std::array<int, 3>{0, 0, 0}, std::array<int, 3>{1, 2, 0}}) {
    const Box<3> box(global, {2, 3, 1}, {index[0], index[1], index[2]});
    expect_box_follows_whole<CpuExec, 3, IsingModel>(
        exec, box, params, {UpdateAlgorithm::metropolis, UpdateAlgorithm::heatbath}, 3);
  }
}

TEST(Box, PottsAndContinuousInteriorsFollowTheWholeLattice) {
  const CpuExec exec(2);
  const int64_t global[2] = {12, 10};
  const Box<2> box(global, {3, 1}, {2, 0});
  expect_box_follows_whole<CpuExec, 2, PottsModel>(
      exec, box, make_potts_params(2, 3, 1.0, 0.2, 5),
      {UpdateAlgorithm::metropolis, UpdateAlgorithm::heatbath}, 3);
  expect_box_follows_whole<CpuExec, 2, OnModel<double, 3>>(
      exec, box, OnParams{7, 0.7, 0.1, 0.8, 2, 2},
      {UpdateAlgorithm::metropolis, UpdateAlgorithm::heatbath, UpdateAlgorithm::overrelaxation}, 2);
  expect_box_follows_whole<CpuExec, 2, Phi4Model<float>>(
      exec, box, Phi4Params{8, 0.18, 1.1, 0.05, 1.5, 2, 2},
      {UpdateAlgorithm::metropolis, UpdateAlgorithm::overrelaxation}, 2);
}

TEST(Box, PackedIsingInteriorFollowsTheWholeLattice) {
  const CpuExec exec(2);
  const int64_t global[3] = {6, 8, 128};
  expect_packed_box_follows_whole(exec, Box<3>(global, {3, 2, 1}, {1, 1, 0}),
                                  make_ising_params(3, 0.3, -0.2, 11), 3);
  for (int index : {0, 2}) {  // slabs, wrapping at either end
    expect_packed_box_follows_whole(exec, Box<3>(global, {3, 1, 1}, {index, 0, 0}),
                                    make_ising_params(3, 0.3, -0.2, 11), 2);
  }
}

}  // namespace
}  // namespace lattica::test

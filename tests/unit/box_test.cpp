// Boxes of a larger lattice (Checkerboard::make_box), the geometry of domain decomposition: a
// box holding a part of the lattice and one ghost layer on each side of every split axis,
// refreshed from the whole lattice between colours (as a halo exchange would), updates its
// interior exactly as the whole lattice does, for every model, the byte and the multi-spin
// kernels, boxes that wrap around the periodic boundary, and several passes and sweeps.

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/lattice/checkerboard.hpp"
#include "kernels/models/ising.hpp"
#include "kernels/models/ising_packed.hpp"
#include "kernels/models/lattice_model.hpp"
#include "kernels/models/on.hpp"
#include "kernels/models/phi4.hpp"
#include "kernels/models/potts.hpp"

namespace lattica {
namespace {

/// A box of `global`: `parts[a]` boxes along axis a (1: not split; the last axis is never
/// split), this one the `index[a]`-th; split axes get a ghost layer on each side.
template <int D>
struct Box {
  Checkerboard<D> whole;
  Checkerboard<D> local;
  int64_t size[D];   ///< interior extents
  bool split[D];

  Box(const int64_t (&global)[D], const int (&parts)[D], const int (&index)[D]) {
    int64_t extents[D], origin[D];
    for (int a = 0; a < D; ++a) {
      size[a] = global[a] / parts[a];
      split[a] = parts[a] > 1;
      extents[a] = size[a] + (split[a] ? 2 : 0);
      origin[a] = index[a] * size[a] - (split[a] ? 1 : 0);
    }
    whole = Checkerboard<D>::make(global);
    local = Checkerboard<D>::make_box(extents, global, origin);
  }

  /// Storage position in the whole lattice of local storage position `position`, and whether
  /// the site is interior (not a ghost).
  int64_t whole_position(int64_t position, bool& interior) const {
    const int colour = position >= local.half_volume;
    int64_t x[D], h;
    const int p = local.decompose(position - colour * local.half_volume, colour, x, h);
    interior = true;
    int64_t lex = 0;
    for (int a = 0; a < D - 1; ++a) {
      if (split[a] && (x[a] == 0 || x[a] == local.extent[a] - 1)) interior = false;
      lex = lex * whole.extent[a] + (x[a] + local.origin[a]) % whole.extent[a];
    }
    lex = lex * whole.extent[D - 1] + 2 * h + p;
    return whole.storage_index(lex);
  }
};

/// Runs `sweeps` sweeps of the passes over the whole lattice and the box, refreshing the box's
/// ghosts from the whole lattice before each colour, and expects the box's interior to equal
/// the whole lattice's sites after every colour.
template <int D, class Model>
void expect_box_follows_whole(const Box<D>& box, const typename Model::Params& params,
                              const std::vector<UpdateAlgorithm>& passes, int sweeps) {
  using Spin = typename Model::Spin;
  std::vector<Spin> whole(static_cast<size_t>(box.whole.volume()));
  std::vector<Spin> local(static_cast<size_t>(box.local.volume()));
  const Initialize<D, Model> start{box.whole, params, whole.data(), true};
  for (int64_t i = 0; i < box.whole.volume(); ++i) start(i);
  // The box started on its own hot start: the same sites, since it is keyed by global site.
  const Initialize<D, Model> box_start{box.local, params, local.data(), true};
  for (int64_t i = 0; i < box.local.volume(); ++i) box_start(i);
  auto compare_and_refresh = [&](const std::string& when) {
    int64_t interior_sites = 0;
    for (int64_t i = 0; i < box.local.volume(); ++i) {
      bool interior = false;
      const int64_t w = box.whole_position(i, interior);
      if (interior) {
        ++interior_sites;
        ASSERT_EQ(std::memcmp(&local[i], &whole[w], sizeof(Spin)), 0)
            << when << ": local site " << i << " (whole " << w << ")";
      } else {
        local[i] = whole[w];  // the halo exchange
      }
    }
    ASSERT_GT(interior_sites, 0);
  };
  compare_and_refresh("hot start");
  const int flip = box.local.colour_flip();
  for (int s = 0; s < sweeps; ++s) {
    for (size_t pass = 0; pass < passes.size(); ++pass) {
      for (int colour = 0; colour < 2; ++colour) {
        const UpdateColour<D, Model> on_whole{box.whole,  params, whole.data(),
                                              nullptr,    colour, passes[pass],
                                              static_cast<uint32_t>(pass), static_cast<uint64_t>(s)};
        for (int64_t j = 0; j < box.whole.half_volume; ++j) on_whole(j);
        const UpdateColour<D, Model> on_box{box.local,   params,       local.data(),
                                            nullptr,     colour ^ flip, passes[pass],
                                            static_cast<uint32_t>(pass), static_cast<uint64_t>(s)};
        for (int64_t j = 0; j < box.local.half_volume; ++j) on_box(j);
        compare_and_refresh("sweep " + std::to_string(s) + ", pass " + std::to_string(pass) +
                            ", colour " + std::to_string(colour));
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

TEST(Box, GlobalSiteNamesTheWholeLatticesSite) {
  const int64_t global[3] = {6, 8, 10};
  const Box<3> box(global, {3, 2, 1}, {2, 1, 0});  // wraps along axis 0: rows 3 .. 6 (= 0)
  EXPECT_EQ(box.local.extent[0], 4);
  EXPECT_EQ(box.local.extent[1], 6);
  EXPECT_EQ(box.local.colour_flip(), (3 + 3) & 1);
  for (int64_t i = 0; i < box.local.volume(); ++i) {
    bool interior = false;
    const int64_t w = box.whole_position(i, interior);
    const int colour = i >= box.local.half_volume;
    const int64_t j = i - colour * box.local.half_volume;
    // The same site, named by its whole-lattice lexicographic index, of the flipped colour.
    const int whole_colour = w >= box.whole.half_volume;
    EXPECT_EQ(box.local.site_index(j, colour),
              box.whole.lex_index(w - whole_colour * box.whole.half_volume, whole_colour));
    EXPECT_EQ(whole_colour, colour ^ box.local.colour_flip());
  }
}

TEST(Box, IsingInteriorFollowsTheWholeLattice) {
  const int64_t global[3] = {8, 6, 64};
  const IsingParams params = make_ising_params(3, 0.25, 0.1, 99);
  for (const auto& index : {std::array<int, 3>{0, 0, 0}, std::array<int, 3>{1, 2, 0}}) {
    const Box<3> box(global, {2, 3, 1}, {index[0], index[1], index[2]});
    expect_box_follows_whole<3, IsingModel>(
        box, params, {UpdateAlgorithm::metropolis, UpdateAlgorithm::heatbath}, 3);
  }
}

TEST(Box, PottsAndContinuousInteriorsFollowTheWholeLattice) {
  const int64_t global[2] = {12, 10};
  const Box<2> box(global, {3, 1}, {2, 0});
  expect_box_follows_whole<2, PottsModel>(box, make_potts_params(2, 3, 1.0, 0.2, 5),
                                          {UpdateAlgorithm::metropolis, UpdateAlgorithm::heatbath},
                                          3);
  expect_box_follows_whole<2, OnModel<double, 3>>(
      box, OnParams{7, 0.7, 0.1, 0.8, 2, 2},
      {UpdateAlgorithm::metropolis, UpdateAlgorithm::heatbath, UpdateAlgorithm::overrelaxation},
      2);
  expect_box_follows_whole<2, Phi4Model<float>>(
      box, Phi4Params{8, 0.18, 1.1, 0.05, 1.5, 2, 2},
      {UpdateAlgorithm::metropolis, UpdateAlgorithm::overrelaxation}, 2);
}

/// The multi-spin-coded kernels on a box: its packed words, refreshed from the whole lattice's
/// bits between colours, give the whole lattice's spins on the interior.
TEST(Box, PackedIsingInteriorFollowsTheWholeLattice) {
  constexpr int D = 3;
  const int64_t global[D] = {6, 8, 128};
  const Box<D> box(global, {3, 2, 1}, {1, 1, 0});
  const PackedLattice<D> whole = PackedLattice<D>::make(box.whole);
  const PackedLattice<D> local = PackedLattice<D>::make(box.local);
  const IsingParams params = make_ising_params(D, 0.3, -0.2, 11);
  std::vector<uint32_t> whole_words(2 * whole.words), local_words(2 * local.words);
  for (int64_t i = 0; i < 2 * whole.words; ++i)
    PackedIsingInitialize<D>{whole, params, whole_words.data(), true}(i);
  for (int64_t i = 0; i < 2 * local.words; ++i)
    PackedIsingInitialize<D>{local, params, local_words.data(), true}(i);
  auto bit = [](const std::vector<uint32_t>& words, int64_t position) {
    return (words[position / 32] >> (position % 32)) & 1;
  };
  auto compare_and_refresh = [&](const std::string& when) {
    for (int64_t i = 0; i < box.local.volume(); ++i) {
      bool interior = false;
      const int64_t w = box.whole_position(i, interior);
      if (interior) {
        ASSERT_EQ(bit(local_words, i), bit(whole_words, w)) << when << ": local site " << i;
      } else {
        local_words[i / 32] = (local_words[i / 32] & ~(1u << (i % 32))) |
                              (static_cast<uint32_t>(bit(whole_words, w)) << (i % 32));
      }
    }
  };
  compare_and_refresh("hot start");
  const int flip = box.local.colour_flip();
  for (UpdateAlgorithm algorithm : {UpdateAlgorithm::metropolis, UpdateAlgorithm::heatbath}) {
    PackedFlipClasses<D, 4 * D + 2> classes;
    ASSERT_TRUE((PackedFlipClasses<D, 4 * D + 2>::make(
        params.flip_threshold[algorithm == UpdateAlgorithm::heatbath], classes)));
    for (uint64_t sweep = 0; sweep < 3; ++sweep) {
      const uint64_t step = update_step(sweep, 0, 0);
      for (int colour = 0; colour < 2; ++colour) {
        const PackedIsingUpdate<D, 4 * D + 2> on_whole{whole, classes, params.seed,
                                                       whole_words.data(), 0, colour, step};
        for (int64_t k = 0; k < whole.words; ++k) on_whole(k);
        const PackedIsingUpdate<D, 4 * D + 2> on_box{local, classes, params.seed,
                                                     local_words.data(), 0, colour ^ flip, step};
        for (int64_t k = 0; k < local.words; ++k) on_box(k);
        compare_and_refresh("sweep " + std::to_string(sweep) + ", colour " +
                            std::to_string(colour));
        if (HasFatalFailure()) return;
      }
    }
  }
}

}  // namespace
}  // namespace lattica

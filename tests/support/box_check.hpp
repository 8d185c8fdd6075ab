#pragma once
// Checks of boxes of a larger lattice (Checkerboard::make_box), the geometry of domain
// decomposition, on either backend: a box holding a part of the lattice and one ghost layer on
// each side of every split axis, its ghosts refreshed from the whole lattice between colours
// (as a halo exchange would), updates its interior exactly as the whole lattice does. The box
// runs the kernels that name sites through its origin (kBoxed), the whole lattice the default
// ones, so the two namings are checked against each other too.

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "kernels/lattice/checkerboard.hpp"
#include "kernels/models/ising.hpp"
#include "kernels/models/ising_packed.hpp"
#include "kernels/models/lattice_model.hpp"

namespace lattica::test {

/// A box of `global`: `parts[a]` boxes along axis a (1: not split; the last axis is never
/// split), this one the `index[a]`-th; split axes get a ghost layer on each side.
template <int D>
struct Box {
  Checkerboard<D> whole;
  Checkerboard<D> local;
  bool split[D];

  Box(const int64_t (&global)[D], const int (&parts)[D], const int (&index)[D]) {
    int64_t extents[D], origin[D], ghosts[D];
    for (int a = 0; a < D; ++a) {
      const int64_t size = global[a] / parts[a];
      split[a] = parts[a] > 1;
      ghosts[a] = split[a] ? 1 : 0;
      extents[a] = size + 2 * ghosts[a];
      origin[a] = index[a] * size - ghosts[a];
    }
    whole = Checkerboard<D>::make(global);
    local = Checkerboard<D>::make_box(extents, global, origin, ghosts);
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

/// Both lattices' variables on the backend and in host copies; step() runs one colour on both
/// (the box's colour flipped to its own parity), then compares the box's interior with the whole
/// lattice and refreshes its ghosts.
template <class Exec, int D, class T>
struct BoxRun {
  const Exec& exec;
  const Box<D>& box;
  typename Exec::template Buffer<T> whole, local;
  std::vector<T> host_whole, host_local;

  BoxRun(const Exec& e, const Box<D>& b, int64_t whole_n, int64_t local_n)
      : exec(e),
        box(b),
        whole(e.template allocate<T>(whole_n)),
        local(e.template allocate<T>(local_n)),
        host_whole(whole_n),
        host_local(local_n) {}

  /// Compares the interior (site i of the box is element(i) of a variable's storage) and
  /// writes the whole lattice's ghosts into the box.
  template <class Compare, class Refresh>
  void compare_and_refresh(const std::string& when, const Compare& same, const Refresh& refresh) {
    exec.copy_to_host(whole, host_whole.data());
    exec.copy_to_host(local, host_local.data());
    int64_t interior_sites = 0;
    for (int64_t i = 0; i < box.local.volume(); ++i) {
      bool interior = false;
      const int64_t w = box.whole_position(i, interior);
      if (interior) {
        ++interior_sites;
        ASSERT_TRUE(same(i, w)) << when << ": local site " << i << " (whole " << w << ")";
      } else {
        refresh(i, w);
      }
    }
    ASSERT_GT(interior_sites, 0);
    exec.copy_to_device(host_local.data(), local);
  }
};

/// Runs `sweeps` sweeps of the passes (byte-per-site kernels) over the whole lattice and the
/// box from their hot starts, and expects the box to follow the whole lattice after every colour.
template <class Exec, int D, class Model>
void expect_box_follows_whole(const Exec& exec, const Box<D>& box,
                              const typename Model::Params& params,
                              const std::vector<UpdateAlgorithm>& passes, int sweeps) {
  using Spin = typename Model::Spin;
  BoxRun<Exec, D, Spin> run(exec, box, box.whole.volume(), box.local.volume());
  // Each starts on its own hot start: the same sites, since both are keyed by global site.
  exec.for_each(box.whole.volume(),
                Initialize<D, Model>{box.whole, params, run.whole.data(), true});
  exec.for_each(box.local.volume(),
                Initialize<D, Model, true>{box.local, params, run.local.data(), true});
  auto same = [&](int64_t i, int64_t w) {
    return std::memcmp(&run.host_local[i], &run.host_whole[w], sizeof(Spin)) == 0;
  };
  auto refresh = [&](int64_t i, int64_t w) { run.host_local[i] = run.host_whole[w]; };
  run.compare_and_refresh("hot start", same, refresh);
  const int flip = box.local.colour_flip();
  for (int s = 0; s < sweeps; ++s) {
    for (size_t pass = 0; pass < passes.size(); ++pass) {
      for (int colour = 0; colour < 2; ++colour) {
        const auto p = static_cast<uint32_t>(pass);
        const auto sweep = static_cast<uint64_t>(s);
        exec.for_each(box.whole.half_volume,
                      UpdateColour<D, Model>{box.whole, params, run.whole.data(), nullptr, colour,
                                             passes[pass], p, sweep});
        exec.for_each(box.local.half_volume,
                      UpdateColour<D, Model, true>{box.local, params, run.local.data(), nullptr,
                                                   colour ^ flip, passes[pass], p, sweep});
        run.compare_and_refresh("sweep " + std::to_string(s) + ", pass " + std::to_string(pass) +
                                    ", colour " + std::to_string(colour),
                                same, refresh);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

/// The multi-spin-coded kernels on a box: its packed words, refreshed from the whole lattice's
/// bits between colours, give the whole lattice's spins on the interior.
template <class Exec, int D>
void expect_packed_box_follows_whole(const Exec& exec, const Box<D>& box, const IsingParams& params,
                                     int sweeps) {
  const PackedLattice<D> whole = PackedLattice<D>::make(box.whole);
  const PackedLattice<D> local = PackedLattice<D>::make(box.local);
  BoxRun<Exec, D, uint32_t> run(exec, box, 2 * whole.words, 2 * local.words);
  exec.for_each(2 * whole.words, PackedIsingInitialize<D>{whole, params, run.whole.data(), true});
  exec.for_each(2 * local.words,
                PackedIsingInitialize<D, true>{local, params, run.local.data(), true});
  auto bit = [](const std::vector<uint32_t>& words, int64_t position) {
    return (words[position / 32] >> (position % 32)) & 1;
  };
  auto same = [&](int64_t i, int64_t w) {
    return bit(run.host_local, i) == bit(run.host_whole, w);
  };
  auto refresh = [&](int64_t i, int64_t w) {
    uint32_t& word = run.host_local[i / 32];
    word = (word & ~(1u << (i % 32))) | (static_cast<uint32_t>(bit(run.host_whole, w)) << (i % 32));
  };
  run.compare_and_refresh("hot start", same, refresh);
  const int flip = box.local.colour_flip();
  constexpr int kSlots = 4 * D + 2;  // enough for any table
  for (UpdateAlgorithm algorithm : {UpdateAlgorithm::metropolis, UpdateAlgorithm::heatbath}) {
    PackedFlipClasses<D, kSlots> classes;
    ASSERT_TRUE((PackedFlipClasses<D, kSlots>::make(
        params.flip_threshold[algorithm == UpdateAlgorithm::heatbath], classes)));
    for (int s = 0; s < sweeps; ++s) {
      const uint64_t step = update_step(static_cast<uint64_t>(s), 0, 0);
      for (int colour = 0; colour < 2; ++colour) {
        exec.for_each(whole.words, PackedIsingUpdate<D, kSlots>{whole, classes, params.seed,
                                                                run.whole.data(), 0, colour, step});
        exec.for_each(local.words,
                      PackedIsingUpdate<D, kSlots, true>{local, classes, params.seed,
                                                         run.local.data(), 0, colour ^ flip, step});
        run.compare_and_refresh("sweep " + std::to_string(s) + ", colour " + std::to_string(colour),
                                same, refresh);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

}  // namespace lattica::test

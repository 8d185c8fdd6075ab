// Domain decomposition (sim/decomposition.hpp): grids checked against the lattice and the
// ranks with clear errors, automatic grids with the least halo, neighbours, and whole-lattice
// configurations split into boxes with ghost layers and put back together.

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "kernels/backend/cpu_exec.hpp"
#include "sim/decomposition.hpp"
#include "sim/engine/decomposed_box.hpp"
#include "sim/engine/engine.hpp"
#include "tests/support/stand_in_communicator.hpp"

namespace lattica {
namespace {

void expect_refused(const std::vector<int64_t>& dims, const std::vector<int>& grid, int ranks,
                    const std::string& words) {
  try {
    Decomposition d(dims, grid, ranks);
    ADD_FAILURE() << grid_text(grid) << " with " << ranks << " ranks was accepted";
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("parallel.grid"), std::string::npos) << message;
    EXPECT_NE(message.find(words), std::string::npos) << message;
  }
}

TEST(Decomposition, RefusesGridsThatDoNotFit) {
  expect_refused({16, 16, 64}, {2, 2, 1}, 2, "makes 4 boxes but the run has 2");
  expect_refused({16, 16, 64}, {1, 1, 2}, 2, "last axis cannot be split");
  expect_refused({16, 12, 64}, {1, 5, 1}, 5, "lattice.dims[1] = 12 does not split into 5");
  expect_refused({16, 6, 64}, {1, 2, 1}, 2, "even");  // boxes of 3
  expect_refused({16, 64}, {2, 1, 1}, 2, "one entry per lattice axis");
  expect_refused({6, 64}, {}, 4, "no grid of 4 boxes");
  expect_refused({64}, {}, 2, "no grid of 2 boxes");
}

TEST(Decomposition, AutomaticGridsHaveTheLeastHalo) {
  EXPECT_EQ(automatic_grid({8, 32, 64}, 4), (std::vector<int>{1, 4, 1}));
  EXPECT_EQ(automatic_grid({64, 64, 64}, 4), (std::vector<int>{4, 1, 1}));  // ties: slow axes
  EXPECT_EQ(automatic_grid({32, 32, 32, 64}, 8), (std::vector<int>{4, 2, 1, 1}));  // = 2,2,2,1
  EXPECT_EQ(automatic_grid({128, 64}, 1), (std::vector<int>{1, 1}));
  EXPECT_EQ(automatic_grid({64}, 1), (std::vector<int>{1}));
  const Decomposition d({8, 32, 64}, {}, 4);
  EXPECT_EQ(d.grid(), (std::vector<int>{1, 4, 1}));
  EXPECT_EQ(d.box(), (std::vector<int64_t>{8, 8, 64}));
  EXPECT_EQ(d.storage_extents(), (std::vector<int64_t>{8, 10, 64}));
}

TEST(Decomposition, NeighboursAndOriginsWrapAround) {
  const Decomposition d({12, 8, 16}, {3, 2, 1}, 6);
  for (int r = 0; r < d.ranks(); ++r) {
    const std::vector<int> c = d.coordinates(r);
    EXPECT_EQ(c[2], 0);
    for (int axis = 0; axis < 2; ++axis) {
      EXPECT_EQ(d.neighbour(d.neighbour(r, axis, +1), axis, -1), r);
      std::vector<int> up = c;
      up[axis] = (up[axis] + 1) % d.grid()[axis];
      EXPECT_EQ(d.coordinates(d.neighbour(r, axis, +1)), up);
    }
    const std::vector<int64_t> o = d.storage_origin(r);
    EXPECT_EQ(o[0], (c[0] * 4 - 1 + 12) % 12);  // one ghost layer before the box
    EXPECT_EQ(o[1], (c[1] * 4 - 1 + 8) % 8);
    EXPECT_EQ(o[2], 0);
  }
  EXPECT_EQ(d.storage_origin(0)[0], 11);  // rank 0's ghost layer is the lattice's last row
}

TEST(Decomposition, BoxesWithGhostsPutBackTogether) {
  const std::vector<int64_t> dims{6, 8, 4, 16};
  const Decomposition d(dims, {3, 2, 2, 1}, 12);
  const int64_t volume = std::accumulate(dims.begin(), dims.end(), int64_t(1),
                                         [](int64_t a, int64_t b) { return a * b; });
  std::vector<double> whole(static_cast<size_t>(volume));
  std::mt19937_64 gen(3);
  for (double& x : whole) x = static_cast<double>(gen());
  const std::vector<int64_t> e = d.storage_extents();
  const int64_t box_volume = e[0] * e[1] * e[2] * e[3];
  std::vector<double> rebuilt(whole.size(), -1.0);
  for (int r = 0; r < d.ranks(); ++r) {
    std::vector<double> box(static_cast<size_t>(box_volume));
    d.box_from_whole(r, whole.data(), box.data(), sizeof(double));
    // Every storage site, ghosts included, holds the whole lattice's site at origin + x.
    const std::vector<int64_t> o = d.storage_origin(r);
    for (int64_t i = 0; i < box_volume; ++i) {
      int64_t rest = i, global = 0, stride = 1;
      for (int a = 3; a >= 0; --a) {
        const int64_t x = rest % e[a];
        rest /= e[a];
        global += ((x + o[a]) % dims[a]) * stride;
        stride *= dims[a];
      }
      ASSERT_EQ(box[i], whole[global]) << "rank " << r << ", storage site " << i;
    }
    d.box_into_whole(r, box.data(), rebuilt.data(), sizeof(double));
  }
  EXPECT_EQ(rebuilt, whole);  // the interiors tile the lattice exactly once
}

}  // namespace
}  // namespace lattica

namespace lattica {
namespace {

/// One rank of `size` that records the halo exchanges asked of it instead of sending.
class RecordingCommunicator final : public StandInCommunicator {
 public:
  using StandInCommunicator::StandInCommunicator;
  void exchange(int down, int up, const void*, const void*, void*, void*, size_t bytes,
                void*) override {
    log.push_back("exchange " + std::to_string(down) + " " + std::to_string(up) + " " +
                  std::to_string(bytes));
  }
  std::vector<std::string> log;
};

/// The blocks one colour's pass updates: every interior row exactly once, no ghost row, the
/// rows next to ghosts in blocks before the others, and the exchange after the updates are
/// queued.
template <int D>
void expect_blocks_cover_interior(const std::vector<int64_t>& dims, const std::vector<int>& grid,
                                  int rank) {
  const int ranks = std::accumulate(grid.begin(), grid.end(), 1, std::multiplies<int>());
  auto comm = std::make_shared<RecordingCommunicator>(rank, ranks);
  EngineSettings s;
  s.dims = dims;
  s.parallel_grid = grid;
  s.communicator = comm;
  s.replicas = 2;
  const Checkerboard<D> lattice = engine_lattice<D>(s);
  const CpuExec exec(1);
  DecomposedBox<CpuExec, D> box(exec, s, lattice, 1, lattice.half_last, lattice.half_volume,
                                lattice.volume());
  const int64_t rows = lattice.half_volume / lattice.half_last;
  std::vector<int> updates(static_cast<size_t>(rows), 0);
  std::vector<int> block_of(static_cast<size_t>(rows), -1);
  int blocks = 0;
  std::vector<int8_t> storage(static_cast<size_t>(s.replicas * lattice.volume()));
  box.update_colour(0, storage.data(), [&](const RowBlock<D>& block) {
    for (int64_t r = 0; r < block.rows; ++r) {
      const int64_t row = block.row(static_cast<uint32_t>(r));
      ++updates[static_cast<size_t>(row)];
      block_of[static_cast<size_t>(row)] = blocks;
      EXPECT_TRUE(comm->log.empty()) << "an update queued after the exchange";
    }
    ++blocks;
    // The kernels' view of the block (a plain range where the rows are consecutive): unit t is
    // unit t % half_last of the block's (t / half_last)-th row, after `base`.
    const int64_t base = 1000;
    std::vector<int64_t> seen;
    over_row_block(
        block, lattice.half_last, base, [&](int64_t i) { seen.push_back(i); },
        [&](int64_t n, const auto& g) {
          for (int64_t t = 0; t < n; ++t) g(t);
        });
    ASSERT_EQ(static_cast<int64_t>(seen.size()), block.rows * lattice.half_last);
    for (int64_t t = 0; t < static_cast<int64_t>(seen.size()); ++t) {
      const int64_t row = block.row(static_cast<uint32_t>(t / lattice.half_last));
      ASSERT_EQ(seen[static_cast<size_t>(t)],
                base + row * lattice.half_last + t % lattice.half_last);
    }
  });
  int split_axes = 0;
  for (int a = 0; a < D - 1; ++a) split_axes += grid[a] > 1;
  ASSERT_EQ(comm->log.size(), static_cast<size_t>(split_axes));
  int last_boundary_block = -1, first_deep_block = blocks;
  for (int64_t row = 0; row < rows; ++row) {
    int64_t rest = row;
    bool ghost = false, next_to_ghost = false;
    for (int a = D - 2; a >= 0; --a) {
      const int64_t x = rest % lattice.extent[a];
      rest /= lattice.extent[a];
      if (grid[a] == 1) continue;
      ghost |= x == 0 || x == lattice.extent[a] - 1;
      next_to_ghost |= x == 1 || x == lattice.extent[a] - 2;
    }
    EXPECT_EQ(updates[static_cast<size_t>(row)], ghost ? 0 : 1) << "row " << row;
    if (ghost) continue;
    const int block = block_of[static_cast<size_t>(row)];
    if (next_to_ghost) last_boundary_block = std::max(last_boundary_block, block);
    if (!next_to_ghost) first_deep_block = std::min(first_deep_block, block);
  }
  EXPECT_LT(last_boundary_block, first_deep_block) << "the boundary rows come first";
  // The first exchange goes along the first split axis, to that axis's neighbours.
  const Decomposition d(dims, grid, ranks);
  for (int a = 0; a < D - 1; ++a) {
    if (grid[a] == 1) continue;
    const std::string expected = "exchange " + std::to_string(d.neighbour(rank, a, -1)) + " " +
                                 std::to_string(d.neighbour(rank, a, +1));
    EXPECT_EQ(comm->log.front().rfind(expected, 0), 0u) << comm->log.front();
    break;
  }
}

TEST(DecomposedBox, BlocksCoverTheInteriorOnceBoundaryFirstThenExchange) {
  expect_blocks_cover_interior<2>({16, 64}, {4, 1}, 1);
  expect_blocks_cover_interior<3>({8, 12, 64}, {2, 2, 1}, 3);
  expect_blocks_cover_interior<3>({4, 8, 64}, {2, 1, 1}, 0);  // boxes of 2: no deep interior
  expect_blocks_cover_interior<4>({8, 4, 12, 64}, {2, 2, 3, 1}, 7);
}

}  // namespace
}  // namespace lattica

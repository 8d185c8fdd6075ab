// The cluster labelling on the GPU against the serial labelling (tests/support/serial_labels.hpp)
// on random, percolating, sparse, full, empty, wrapping and ghost-bonded bond sets of 1 to 4
// dimensions and several replicas, up to 1024^2, 128^3 and 32^4 sites so that many threads race:
// every node's root must be exactly the canonical one (1 + the smallest site of its cluster, or the
// ghost, 0). Both GPU labellings: the generic one (kernels/cluster/union_find.hpp: UniteBonds, then
// FlattenLabels, through CudaExec) at every block size, and the engine's, tile by tile
// (kernels/cluster/ tile_labels.cuh), at every tile shape, on whole lattices and on boxes with
// ghost layers. The same functors on CPU threads are checked in tests/unit/cluster_labels_test.cpp
// (the CUDA files' host code is compiled without OpenMP).

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/backend/cpu_exec.hpp"
#include "kernels/backend/cuda_exec.cuh"
#include "kernels/cluster/cluster_moves.hpp"
#include "kernels/cluster/tile_labels.cuh"
#include "kernels/models/ising.hpp"
#include "kernels/models/potts.hpp"
#include "tests/support/cluster_check.hpp"
#include "tests/support/gpu.hpp"

namespace lattica::test {
namespace {

TEST(GpuClusterLabels, CanonicalRootsOnEveryBondSetAndBlockSize) {
  LATTICA_REQUIRE_GPU_OR_SKIP();
  const CudaExec small(0, 64), usual(0, 256), large(0, 1024);
  for (const BondSet& b : standard_bond_sets(true)) {
    SCOPED_TRACE(b.name);
    const std::vector<uint32_t> want = expected_roots(b);
    ASSERT_TRUE(same_roots(concurrent_roots(small, b), want)) << "block 64";
    ASSERT_TRUE(same_roots(concurrent_roots(usual, b), want)) << "block 256";
    ASSERT_TRUE(same_roots(concurrent_roots(large, b), want)) << "block 1024";
  }
}

template <int D>
TileShape<D> tile_shape(const std::vector<int>& log2) {
  TileShape<D> shape{};
  for (int a = 0; a < D; ++a) shape.log2[a] = log2[static_cast<size_t>(a)];
  return shape;
}

/// The same for g's dimension.
template <int D>
TileShape<D> tile_shape_of(const ClusterLattice<D>&, const std::vector<int>& log2) {
  return tile_shape<D>(log2);
}

/// Every node's parent after label_box_tiled of b with tiles of 2^log2 sites along the axes, in
/// blocks of at most most_threads threads (0: the engine's; the sweeps of aligned tiles then take
/// 16 rows a thread where the tiles have them, at 512 threads 8 rows of 4096-site tiles).
std::vector<uint32_t> tiled_roots(const CudaExec& exec, const BondSet& b,
                                  const std::vector<int>& log2, int most_threads = 0) {
  return roots_after(exec, b, [&](const auto& g, uint8_t* bonds, uint32_t* parent, int64_t sites) {
    label_box_tiled(exec, g, bonds, parent, sites, tile_shape_of(g, log2), most_threads);
  });
}

// The tiles' labelling, whatever their shape: tiles of one site (every bond between tiles),
// thin and flat ones, rows shorter and longer than a warp, the engine's defaults and the
// largest (4096 sites), and tiles larger than the lattice or not dividing it.
TEST(GpuClusterLabels, TiledLabellingGivesTheCanonicalRootsAtEveryTileShape) {
  LATTICA_REQUIRE_GPU_OR_SKIP();
  const CudaExec exec(0);
  const std::vector<std::vector<int>> shapes[4] = {
      {{0}, {3}, {5}, {12}},
      {{0, 0}, {1, 1}, {0, 5}, {5, 0}, {2, 7}, {5, 7}, {6, 6}, {7, 5}, {0, 12}},
      {{0, 0, 0}, {1, 1, 1}, {0, 2, 5}, {3, 3, 3}, {4, 4, 4}, {3, 4, 5}, {2, 3, 7}},
      {{0, 0, 0, 0}, {1, 1, 1, 1}, {2, 2, 2, 2}, {3, 3, 3, 3}, {1, 2, 3, 5}}};
  for (const BondSet& b : standard_bond_sets(true)) {
    SCOPED_TRACE(b.name);
    const std::vector<uint32_t> want = expected_roots(b);
    for (const std::vector<int>& log2 : shapes[b.dims.size() - 1]) {
      std::string shape;
      for (int l : log2) shape += " " + std::to_string(l);
      for (int threads : {0, 512}) {
        ASSERT_TRUE(same_roots(tiled_roots(exec, b, log2, threads), want))
            << "tile log2" << shape << ", at most " << threads << " threads";
      }
    }
  }
}

// Every way of uniting the bonds between tiles (FaceUnions: the engine's, and those that
// cluster_bench compares it with) gives the canonical roots: tiles of one site (every bond
// crosses tiles), cut tiles, the engine's.
TEST(GpuClusterLabels, EveryWayOfUnitingTheFacesGivesTheCanonicalRoots) {
  LATTICA_REQUIRE_GPU_OR_SKIP();
  const CudaExec exec(0);
  const std::vector<std::vector<int>> shapes[4] = {{{0}, {5}},
                                                   {{0, 0}, {2, 7}, {5, 7}},
                                                   {{0, 0, 0}, {1, 2, 3}, {3, 4, 5}},
                                                   {{0, 0, 0, 0}, {2, 2, 2, 2}}};
  for (const BondSet& b : standard_bond_sets(true)) {
    SCOPED_TRACE(b.name);
    const std::vector<uint32_t> want = expected_roots(b);
    for (const std::vector<int>& log2 : shapes[b.dims.size() - 1]) {
      for (FaceUnions faces :
           {FaceUnions::each_bond, FaceUnions::distinct_axis_by_axis, FaceUnions::distinct}) {
        const auto roots = roots_after(
            exec, b, [&](const auto& g, uint8_t* bonds, uint32_t* parent, int64_t sites) {
              label_box_tiled(exec, g, bonds, parent, sites, tile_shape_of(g, log2), 0, faces);
            });
        ASSERT_TRUE(same_roots(roots, want))
            << "tile log2 " << log2[0] << "..., faces " << static_cast<int>(faces);
      }
    }
  }
}

/// Brick walls on rows x columns sites: the bonds along axis 0 (each missing with probability
/// `drop`), and along axis 1 those from the sites whose coordinates sum to an even number, so
/// that each run of two sites of a row meets two labels of the row before; and a ghost bond at
/// each site with probability `ghost`.
BondSet brick_walls(const std::string& name, int64_t rows, int64_t columns, double drop,
                    double ghost, uint64_t seed) {
  BondSet b{name, {rows, columns}, 1, std::vector<uint8_t>(static_cast<size_t>(rows * columns))};
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int64_t y = 0; y < rows; ++y) {
    for (int64_t x = 0; x < columns; ++x) {
      uint8_t& mask = b.bonds[static_cast<size_t>(y * columns + x)];
      if (u(rng) >= drop) mask |= 1;
      if ((x + y) % 2 == 0) mask |= 2;
      if (u(rng) < ghost) mask |= kGhostBond;
    }
  }
  return b;
}

// The swept tiles' queues of unions (WarpUnions, a slot for every two sites) overflowing: on
// brick walls each warp of the 32 x 128 tiles queues about 12 unions a row of 32 sites in its
// sweep and 32 for the bonds to the next warp's rows: at 8 rows a thread (blocks of 512 threads)
// a whole queue, at 16 nearly; the ghost bonds queue more, which are united at once.
TEST(GpuClusterLabels, SweptTilesWhoseQueuesOfUnionsOverflow) {
  LATTICA_REQUIRE_GPU_OR_SKIP();
  const CudaExec exec(0);
  const BondSet sets[] = {
      brick_walls("brick walls", 128, 256, 0, 0, 1),
      brick_walls("brick walls, every site bonded to the ghost", 128, 256, 0, 1, 2),
      brick_walls("brick walls, 2 % of the bonds along axis 0 missing, half the sites bonded to "
                  "the ghost",
                  256, 512, 0.02, 0.5, 3),
      brick_walls("brick walls, 30 % of the bonds along axis 0 missing", 256, 512, 0.3, 0, 4)};
  for (const BondSet& b : sets) {
    SCOPED_TRACE(b.name);
    const std::vector<uint32_t> want = expected_roots(b);
    for (const std::vector<int>& log2 : {std::vector<int>{5, 7}, std::vector<int>{6, 6}}) {
      for (int threads : {0, 512}) {
        ASSERT_TRUE(same_roots(tiled_roots(exec, b, log2, threads), want))
            << "tile log2 " << log2[0] << ", at most " << threads << " threads";
      }
    }
  }
}

// Which grids the sweeps (label_aligned_tiles_kernel) label: whole lattices of 2 or more
// dimensions whose extents the tiles divide, with rows of 32 sites or more. The test above runs
// them on 1024^2, 512^2 x 4 replicas, 128^3 and 32^4, among others, and the generic kernel on the
// rest (1D, 1000 x 999, 130 x 66, short rows, tiles larger than the lattice), both against the
// serial roots.
TEST(GpuClusterLabels, AlignedGridsAreTheWholeLatticesTheTilesDivide) {
  const auto grid = [](std::vector<int64_t> dims, std::vector<int64_t> ghosts,
                       std::vector<int> log2) {
    int64_t extents[2] = {dims[0], dims[1]}, layers[2] = {ghosts[0], ghosts[1]};
    return TileGrid<2>::make(ClusterLattice<2>::make(Checkerboard<2>::make(extents), layers),
                             tile_shape<2>(log2));
  };
  EXPECT_TRUE(grid({1024, 1024}, {0, 0}, {5, 7}).aligned);
  EXPECT_TRUE(grid({64, 256}, {0, 0}, {6, 6}).aligned);
  EXPECT_TRUE(grid({8, 32}, {0, 0}, {5, 7}).aligned);   // tiles cut to the lattice: one whole tile
  EXPECT_FALSE(grid({8, 16}, {0, 0}, {5, 7}).aligned);  // rows shorter than a warp
  EXPECT_FALSE(grid({2, 4096}, {0, 0}, {0, 12}).aligned);   // one row a tile: 4096 threads
  EXPECT_TRUE(grid({64, 512}, {0, 0}, {1, 9}).aligned);     // 2 rows of 512: 512 threads
  EXPECT_FALSE(grid({64, 1024}, {0, 0}, {1, 10}).aligned);  // 2 rows of 1024: 1024 threads
  EXPECT_FALSE(grid({1000, 998}, {0, 0}, {5, 7}).aligned);
  EXPECT_FALSE(grid({130, 66}, {0, 0}, {5, 5}).aligned);
  EXPECT_FALSE(grid({128, 128}, {1, 0}, {5, 5}).aligned);  // a box with ghost layers
  // Where the aligned kernel's offsets and the generic kernel's coordinates name the same site.
  const TileGrid<2> t = grid({64, 256}, {0, 0}, {5, 7});
  for (int l : {0, 1, 127, 128, 4095}) {
    EXPECT_EQ(t.offset(l), static_cast<uint32_t>((l >> 7) * 256 + (l & 127))) << l;
  }
}

// A box of a decomposed lattice, with ghost layers along the split axes: the tiled labelling
// must leave the bonds to and from ghost layers alone (the merge across boxes takes them) and
// give the generic labelling's roots.
template <int D>
void expect_box_tiles_like_generic(const int64_t (&extents)[D], const int64_t (&ghosts)[D],
                                   int replicas, uint64_t seed) {
  const ClusterLattice<D> g = ClusterLattice<D>::make(Checkerboard<D>::make(extents), ghosts);
  const int64_t sites = replicas * g.volume;
  for (double p : {0.05, 0.5, 0.9}) {
    std::vector<int64_t> dims(extents, extents + D);
    const BondSet b = random_bonds("box", dims, replicas, p, 0.01, seed++);
    std::vector<uint32_t> roots[2];
    const auto run = [&](const auto& exec, int which, const std::vector<int>& log2) {
      auto bonds = exec.template allocate<uint8_t>(sites);
      auto parent = exec.template allocate<uint32_t>(sites + 1);
      exec.copy_to_device(b.bonds.data(), bonds);
      exec.zero(parent);
      if constexpr (std::is_same_v<std::decay_t<decltype(exec)>, CudaExec>) {
        label_box_tiled(exec, g, bonds.data(), parent.data(), sites, tile_shape<D>(log2));
      } else {
        label_box(exec, g, bonds.data(), parent.data(), sites);  // the generic one
      }
      roots[which].resize(static_cast<size_t>(sites + 1));
      exec.copy_to_host(parent, roots[which].data());
    };
    run(CpuExec(2), 0, {});
    for (const std::vector<int>& log2 :
         {std::vector<int>(D, 0), std::vector<int>(D, 1), std::vector<int>(D, 12 / D)}) {
      run(CudaExec(0), 1, log2);
      EXPECT_TRUE(same_roots(roots[1], roots[0]))
          << D << "D box, p = " << p << ", tile log2 " << log2[0];
    }
  }
}

TEST(GpuClusterLabels, TiledLabellingOfBoxesWithGhostLayersIsTheGenericOne) {
  LATTICA_REQUIRE_GPU_OR_SKIP();
  {
    const int64_t extents[2] = {130, 66}, ghosts[2] = {1, 0};
    expect_box_tiles_like_generic<2>(extents, ghosts, 2, 100);
  }
  {
    const int64_t extents[2] = {66, 200}, ghosts[2] = {1, 1};
    expect_box_tiles_like_generic<2>(extents, ghosts, 1, 200);
  }
  {
    const int64_t extents[3] = {34, 18, 40}, ghosts[3] = {1, 1, 0};
    expect_box_tiles_like_generic<3>(extents, ghosts, 2, 300);
  }
  {
    const int64_t extents[4] = {10, 6, 8, 12}, ghosts[4] = {1, 0, 1, 1};
    expect_box_tiles_like_generic<4>(extents, ghosts, 1, 400);
  }
}

// Labelling replicas together gives each the roots it has alone, moved by its offset.
TEST(GpuClusterLabels, ReplicasAreLabelledIndependently) {
  LATTICA_REQUIRE_GPU_OR_SKIP();
  const CudaExec exec(0);
  for (const std::vector<int64_t>& dims :
       {std::vector<int64_t>{4096}, std::vector<int64_t>{96, 80}, std::vector<int64_t>{20, 18, 16},
        std::vector<int64_t>{8, 10, 6, 12}}) {
    const int replicas = 5;
    const BondSet together =
        with_ghost_bonds(random_bonds("replicas", dims, replicas, 0.5, 0.0, 91), 3, 92);
    const std::vector<uint32_t> all = concurrent_roots(exec, together);
    const int64_t volume = together.volume();
    for (int r = 0; r < replicas; ++r) {
      BondSet alone{"replica alone", dims, 1, {}};
      alone.bonds.assign(together.bonds.begin() + r * volume,
                         together.bonds.begin() + (r + 1) * volume);
      const std::vector<uint32_t> own = concurrent_roots(exec, alone);
      std::vector<uint32_t> moved(static_cast<size_t>(volume + 1), kGhostNode);
      for (int64_t i = 0; i < volume; ++i) {
        const uint32_t root = all[static_cast<size_t>(1 + r * volume + i)];
        moved[static_cast<size_t>(1 + i)] =
            root == kGhostNode ? kGhostNode : static_cast<uint32_t>(root - r * volume);
      }
      EXPECT_TRUE(same_roots(moved, own)) << dims.size() << "D, replica " << r;
    }
  }
}

// The engine's own bonds: ClusterBonds on random configurations (Ising with a field, so some
// ghost bonds; Potts q = 3 with h > 0), on the GPU and through CpuExec, then the labelling and
// MoveClusters. The bond masks must be the same bits on both backends and whether a thread takes
// a site or (the engine's way on these whole lattices, where the rows hold whole quads) four
// sites, the roots canonical for those bonds, and the moved spins the same on both backends and
// whether a thread moves a site or a pair.
template <int D, class Model>
void expect_engine_bonds_labelled(const typename Model::Params& params, const int64_t (&extents)[D],
                                  int replicas, int q, uint64_t step, bool field = true) {
  const Checkerboard<D> lattice = Checkerboard<D>::make(extents);
  const int64_t zero[D] = {};
  const ClusterLattice<D> g = ClusterLattice<D>::make(lattice, zero);
  const int64_t sites = replicas * g.volume;
  std::vector<typename Model::Spin> spins(static_cast<size_t>(sites));
  std::mt19937_64 rng(step);
  for (auto& s : spins) {
    const int k = static_cast<int>(rng() % static_cast<uint64_t>(q));
    s = static_cast<typename Model::Spin>(q == 2 ? 2 * k - 1 : k);  // Ising: -1, +1
  }
  BondSet b{"engine bonds", {}, replicas, {}};
  for (int a = 0; a < D; ++a) b.dims.push_back(extents[a]);

  std::vector<uint8_t> bonds_on[2];
  std::vector<uint32_t> roots_on[2];
  std::vector<typename Model::Spin> moved_on[2];
  const auto run = [&](const auto& exec, int which) {
    auto d_spins = exec.template allocate<typename Model::Spin>(sites);
    auto picks = exec.template allocate<ClusterPick<Model>>(replicas);
    auto bonds = exec.template allocate<uint8_t>(sites);
    auto parent = exec.template allocate<uint32_t>(sites + 1);
    exec.copy_to_device(spins.data(), d_spins);
    exec.zero(parent);
    exec.for_each(replicas,
                  PickClusters<Model>{params, picks.data(), step, static_cast<uint64_t>(g.volume)});
    using Sites = ByteSites<D, typename Model::Spin>;
    const ClusterBonds<D, Model, Sites> draw{
        g, params, picks.data(), Sites{lattice, d_spins.data()}, bonds.data(), step};
    exec.for_each(sites, draw);  // a thread a site
    bonds_on[which].resize(static_cast<size_t>(sites));
    exec.copy_to_host(bonds, bonds_on[which].data());
    exec.zero(bonds);
    for_each_cluster_site(exec, sites, draw);  // a thread per quad (rows of 4k sites)
    std::vector<uint8_t> by_quads(bonds_on[which].size());
    exec.copy_to_host(bonds, by_quads.data());  // before the tiles mark representatives
    EXPECT_EQ(by_quads, bonds_on[which]) << "bond masks by quads, backend " << which;
    label_box(exec, g, bonds.data(), parent.data(), sites);  // generic on the CPU, tiled here
    std::vector<uint32_t> parents(static_cast<size_t>(sites + 1));
    exec.copy_to_host(parent, parents.data());
    roots_on[which].resize(parents.size());
    for (size_t n = 0; n < parents.size(); ++n) roots_on[which][n] = parents[parents[n]];
    const MoveClusters<D, Model> move{g,
                                      Sites{lattice, d_spins.data()},
                                      {parent.data(), nullptr, g.volume},
                                      {params, nullptr, step},
                                      picks.data()};
    exec.for_each(sites, move);  // a thread a site
    moved_on[which].resize(spins.size());
    exec.copy_to_host(d_spins, moved_on[which].data());
    exec.copy_to_device(spins.data(), d_spins);
    for_each_cluster_site(exec, sites, move);  // a thread per pair
    std::vector<typename Model::Spin> moved(spins.size());
    exec.copy_to_host(d_spins, moved.data());
    EXPECT_EQ(moved, moved_on[which]) << "spins moved by pairs, backend " << which;
    // Swendsen-Wang's labels and move at once (on the GPU's aligned tiles one kernel flattens
    // and moves): the same spins and roots, from the same bonds; twice with one buffer of parts.
    auto parts = exec.template allocate<uint16_t>(0);
    for (int repeat = 0; repeat < 2; ++repeat) {
      exec.copy_to_device(spins.data(), d_spins);
      exec.zero(parent);
      for_each_cluster_site(exec, sites, draw);
      label_and_move(exec, g, bonds.data(), parent.data(), sites, move, parts);
      exec.copy_to_host(d_spins, moved.data());
      EXPECT_EQ(moved, moved_on[which])
          << "spins of label_and_move, backend " << which << ", step " << repeat;
      exec.copy_to_host(parent, parents.data());
      std::vector<uint32_t> roots(parents.size());
      for (size_t n = 0; n < parents.size(); ++n) roots[n] = parents[parents[n]];
      EXPECT_EQ(roots, roots_on[which])
          << "roots after label_and_move, backend " << which << ", step " << repeat;
    }
  };
  run(CpuExec(1), 0);
  run(CudaExec(0), 1);
  ASSERT_EQ(bonds_on[1], bonds_on[0]) << "bond masks, GPU against CPU";
  EXPECT_EQ(moved_on[1], moved_on[0]) << "moved spins, GPU against CPU";
  EXPECT_NE(moved_on[0], spins) << "the case should move some clusters";
  b.bonds = bonds_on[0];
  int64_t ghost = 0, occupied = 0;
  for (uint8_t mask : b.bonds) {
    ghost += (mask & kGhostBond) != 0;
    for (int a = 0; a < D; ++a) occupied += mask >> a & 1;
  }
  if (field) EXPECT_GT(ghost, 0) << "the case should have ghost bonds";
  EXPECT_GT(occupied, 0);
  const std::vector<uint32_t> want = expected_roots(b);
  EXPECT_TRUE(same_roots(roots_on[0], want)) << "CPU";
  EXPECT_TRUE(same_roots(roots_on[1], want)) << "GPU";
}

TEST(GpuClusterLabels, EngineBondsOnBothBackendsLabelCanonically) {
  LATTICA_REQUIRE_GPU_OR_SKIP();
  {
    SCOPED_TRACE("Ising 2D, h = 0.1, at beta_c");
    const int64_t extents[2] = {256, 130};  // rows of 4k + 2 sites: a thread a site
    expect_engine_bonds_labelled<2, IsingModel>(make_ising_params(2, 0.4406868, 0.1, 17), extents,
                                                2, 2, 5);
  }
  {
    SCOPED_TRACE("Ising 2D, h = 0.1, at beta_c, aligned tiles");
    const int64_t extents[2] = {128, 256};
    expect_engine_bonds_labelled<2, IsingModel>(make_ising_params(2, 0.4406868, 0.1, 27), extents,
                                                2, 2, 8);
  }
  {
    SCOPED_TRACE("Ising 2D, h = 0, at beta_c, aligned tiles, 3 replicas");
    const int64_t extents[2] = {256, 384};
    expect_engine_bonds_labelled<2, IsingModel>(make_ising_params(2, 0.4406868, 0.0, 29), extents,
                                                3, 2, 9, false);
  }
  {
    SCOPED_TRACE("Ising 2D, h = 0, at beta_c, one aligned tile (its own neighbour)");
    const int64_t extents[2] = {32, 128};
    expect_engine_bonds_labelled<2, IsingModel>(make_ising_params(2, 0.4406868, 0.0, 35), extents,
                                                2, 2, 12, false);
  }
  {
    SCOPED_TRACE("Ising 2D, h = 0.1, at beta_c, aligned tiles, one tile across");
    const int64_t extents[2] = {96, 128};
    expect_engine_bonds_labelled<2, IsingModel>(make_ising_params(2, 0.4406868, 0.1, 37), extents,
                                                1, 2, 13);
  }
  {
    SCOPED_TRACE("Ising 3D, h = 0.02, at beta_c, aligned tiles");
    const int64_t extents[3] = {16, 32, 64};
    expect_engine_bonds_labelled<3, IsingModel>(make_ising_params(3, 0.2216544, 0.02, 31), extents,
                                                2, 2, 10);
  }
  {
    SCOPED_TRACE("Potts q = 3 2D, h = 0.1, aligned tiles");
    const int64_t extents[2] = {64, 256};
    expect_engine_bonds_labelled<2, PottsModel>(make_potts_params(2, 3, 1.0050, 0.1, 33), extents,
                                                2, 3, 11);
  }
  {
    SCOPED_TRACE("Ising 3D, h = -0.05");
    const int64_t extents[3] = {32, 24, 40};
    expect_engine_bonds_labelled<3, IsingModel>(make_ising_params(3, 0.2216544, -0.05, 18), extents,
                                                1, 2, 6);
  }
  {
    SCOPED_TRACE("Potts q = 3 2D, h = 0.2");
    const int64_t extents[2] = {64, 96};
    expect_engine_bonds_labelled<2, PottsModel>(make_potts_params(2, 3, 1.0050, 0.2, 19), extents,
                                                3, 3, 7);
  }
}

}  // namespace
}  // namespace lattica::test

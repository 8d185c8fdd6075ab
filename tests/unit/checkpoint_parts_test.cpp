// Per-rank checkpoints (sim/checkpoint_parts.hpp, issue 22): the parts of every rank of a grid,
// written one rank after another through a stand-in communicator, read back as any region of
// the lattice (boxes of other grids with their periodic ghost layers, the whole lattice), byte
// for byte; a new checkpoint replaces the older parts; a missing part is refused; the structure
// factor's running sums, stored by rows, read back as the rows of any rank count.

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sim/checkpoint.hpp"
#include "sim/checkpoint_parts.hpp"
#include "sim/decomposition.hpp"
#include "sim/parallel/slab_fft.hpp"
#include "tests/support/stand_in_communicator.hpp"

namespace lattica {
namespace {

namespace fs = std::filesystem;

/// Rank `rank` of `size` for the collectives a checkpoint uses: rank 0's broadcast (the
/// folder's stamp) is a fixed one, so the ranks written one after another agree on it.
class StandInRank final : public StandInCommunicator {
 public:
  using StandInCommunicator::StandInCommunicator;
  void broadcast(void* data, size_t bytes, int) override {
    const int64_t stamp = 42;
    ASSERT_EQ(bytes, sizeof stamp);
    std::memcpy(data, &stamp, sizeof stamp);
  }
};

const std::vector<int64_t> kDims{12, 4, 8};
constexpr int kReplicas = 2;
constexpr size_t kSiteBytes = 2;

/// Byte j of site (x0, x1, x2) of replica r: different for (nearly) every entry.
unsigned char value(int r, const std::vector<int64_t>& x, size_t j) {
  return static_cast<unsigned char>(31 * r + 17 * x[0] + 7 * x[1] + 3 * x[2] + 101 * j);
}

/// The region origin + i (modulo the lattice) as read_checkpoint_region lays it out.
std::vector<unsigned char> expected_region(const std::vector<int64_t>& origin,
                                           const std::vector<int64_t>& extents) {
  std::vector<unsigned char> out;
  for (int r = 0; r < kReplicas; ++r)
    for (int64_t i = 0; i < extents[0]; ++i)
      for (int64_t k = 0; k < extents[1]; ++k)
        for (int64_t l = 0; l < extents[2]; ++l)
          for (size_t j = 0; j < kSiteBytes; ++j)
            out.push_back(value(r,
                                {(origin[0] + i) % kDims[0], (origin[1] + k) % kDims[1],
                                 (origin[2] + l) % kDims[2]},
                                j));
  return out;
}

/// Modes of one row of axis 0 of the half spectrum of kDims (4 x (8 / 2 + 1)).
constexpr int64_t kRowModes = 4 * 5;

/// The structure factor's sum (squares: 1000 more) at mode k of the half spectrum.
double spectrum_value(int64_t k, bool squares) {
  return 0.5 * static_cast<double>(k) + squares * 1000;
}

/// Writes a checkpoint at `sweep` of every rank of `grid` (rank 0 last, as it finishes last);
/// with `spectrum`, each rank also holds its rows of the structure factor's sums (the slab
/// FFT's rows for that many ranks).
void write_all_parts(const std::string& path, const std::vector<int>& grid, int64_t sweep,
                     bool spectrum = false) {
  int ranks = 1;
  for (int n : grid) ranks *= n;
  const Decomposition boxes(kDims, grid, ranks);
  const AxisSplit rows{kDims[0], ranks};
  for (int rank = ranks - 1; rank >= 0; --rank) {
    StandInRank comm(rank, ranks);
    Checkpoint c;
    c.chain_config = "chain";
    c.sweep = sweep;
    c.engine.region_origin = boxes.box_origin(rank);
    c.engine.region_extents = boxes.box();
    c.engine.configuration = expected_region(boxes.box_origin(rank), boxes.box());
    if (spectrum) {
      StructureFactorSums& sf = c.engine.structure_factor;
      sf.dims = kDims;
      sf.components = 1;
      sf.samples = 3;
      sf.first_row = rows.first(rank);
      for (int64_t k = sf.first_row * kRowModes; k < (sf.first_row + rows.count(rank)) * kRowModes;
           ++k) {
        sf.power_sum.push_back(spectrum_value(k, false));
        sf.power_squares.push_back(spectrum_value(k, true));
      }
      sf.mean_field_sum = {0.25};
    }
    write_decomposed_checkpoint(path, c, boxes, kReplicas, comm);
  }
}

class CheckpointPartsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("lattica_parts_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = (dir_ / "out.h5.checkpoint").string();
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
  std::string path_;
};

TEST_F(CheckpointPartsTest, AnyRegionReadsBackByteForByte) {
  write_all_parts(path_, {3, 2, 1}, 12);
  const Checkpoint c = read_checkpoint(path_);
  EXPECT_EQ(c.sweep, 12);
  EXPECT_EQ(c.parts.grid, (std::vector<int>{3, 2, 1}));
  EXPECT_EQ(c.parts.dims, kDims);
  EXPECT_EQ(c.parts.replicas, kReplicas);
  EXPECT_EQ(c.parts.site_bytes, kSiteBytes);
  EXPECT_TRUE(c.engine.configuration.empty()) << "the manifest holds no configuration";
  // The whole lattice (one process), then every box with its ghosts of other grids.
  EXPECT_EQ(read_checkpoint_region(path_, c, {0, 0, 0}, kDims), expected_region({0, 0, 0}, kDims));
  for (const auto& [grid, ranks] : std::vector<std::pair<std::vector<int>, int>>{
           {{2, 1, 1}, 2}, {{1, 2, 1}, 2}, {{2, 2, 1}, 4}, {{3, 2, 1}, 6}}) {
    const Decomposition other(kDims, grid, ranks);
    for (int rank = 0; rank < ranks; ++rank) {
      const auto origin = other.storage_origin(rank);
      const auto extents = other.storage_extents();
      EXPECT_EQ(read_checkpoint_region(path_, c, origin, extents), expected_region(origin, extents))
          << grid_text(grid) << " rank " << rank;
    }
  }
}

TEST_F(CheckpointPartsTest, ANewCheckpointReplacesTheOlderParts) {
  write_all_parts(path_, {3, 2, 1}, 12);
  write_all_parts(path_, {2, 1, 1}, 14);
  const std::string folder = checkpoint_parts_folder(path_);
  std::vector<std::string> generations;
  for (const auto& entry : fs::directory_iterator(folder))
    generations.push_back(entry.path().filename().string());
  ASSERT_EQ(generations.size(), 1u);
  const Checkpoint c = read_checkpoint(path_);
  EXPECT_EQ(c.sweep, 14);
  EXPECT_EQ(generations[0], c.parts.generation);
  EXPECT_EQ(read_checkpoint_region(path_, c, {0, 0, 0}, kDims), expected_region({0, 0, 0}, kDims));
  remove_checkpoint_parts(path_);
  EXPECT_FALSE(fs::exists(folder));
}

TEST_F(CheckpointPartsTest, AMissingPartIsRefusedWhereItIsNeeded) {
  write_all_parts(path_, {3, 1, 1}, 12);
  const Checkpoint c = read_checkpoint(path_);
  fs::remove(fs::path(checkpoint_parts_folder(path_)) / c.parts.generation / "part-2.h5");
  // Rows 0 .. 7 lie in parts 0 and 1 only; the whole lattice needs part 2.
  EXPECT_EQ(read_checkpoint_region(path_, c, {0, 0, 0}, {8, 4, 8}),
            expected_region({0, 0, 0}, {8, 4, 8}));
  EXPECT_ANY_THROW(read_checkpoint_region(path_, c, {0, 0, 0}, kDims));
}

// The structure factor's sums go to the parts by rows (the manifest keeps the rest), and any
// range of rows reads back from the parts that hold them; a part without them is refused.
TEST_F(CheckpointPartsTest, SpectrumRowsReadBackForAnyRankCount) {
  write_all_parts(path_, {3, 2, 1}, 12, true);
  const Checkpoint c = read_checkpoint(path_);
  const StructureFactorSums& manifest = c.engine.structure_factor;
  EXPECT_TRUE(manifest.power_sum.empty() && manifest.power_squares.empty());
  EXPECT_EQ(manifest.samples, 3);
  EXPECT_EQ(manifest.mean_field_sum, std::vector<double>{0.25});
  for (int ranks : {1, 2, 5, 6, 12, 16}) {
    const AxisSplit rows{kDims[0], ranks};
    for (int rank = 0; rank < ranks; ++rank) {
      StructureFactorSums sums = manifest;
      read_checkpoint_spectrum_rows(path_, c, rows.first(rank), rows.count(rank), sums);
      std::vector<double> sum, squares;
      for (int64_t k = rows.first(rank) * kRowModes;
           k < (rows.first(rank) + rows.count(rank)) * kRowModes; ++k) {
        sum.push_back(spectrum_value(k, false));
        squares.push_back(spectrum_value(k, true));
      }
      EXPECT_EQ(sums.first_row, rows.first(rank));
      EXPECT_EQ(sums.power_sum, sum) << ranks << " ranks, rank " << rank;
      EXPECT_EQ(sums.power_squares, squares) << ranks << " ranks, rank " << rank;
    }
  }
  // Parts written without the sums (a run without spectra) cannot give them.
  write_all_parts(path_, {2, 1, 1}, 14);
  StructureFactorSums sums;
  EXPECT_THROW(read_checkpoint_spectrum_rows(path_, read_checkpoint(path_), 0, 12, sums),
               CheckpointError);
}

}  // namespace
}  // namespace lattica

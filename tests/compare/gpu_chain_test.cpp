// The CUDA backend runs the same Markov chain as the CPU reference, bit for bit: every
// measurement and the final configuration, over many sweeps, sizes, dimensions, algorithms,
// fields, starts and GPU block sizes.

#include <gtest/gtest.h>

#include <vector>

#include "tests/support/gpu.hpp"
#include "tests/support/statistics.hpp"

namespace lattica::test {
namespace {

struct ChainCase {
  const char* name;
  std::vector<int64_t> dims;
  double beta;
  double h;
  UpdateAlgorithm algorithm;
  InitialState start;
  int sweeps;
  int replicas = 1;
  ModelKind model = ModelKind::ising;
  int q = 2;
};

std::ostream& operator<<(std::ostream& os, const ChainCase& c) { return os << c.name; }

class GpuChain : public ::testing::TestWithParam<ChainCase> {};

TEST_P(GpuChain, IdenticalToCpuReference) {
  LATTICA_REQUIRE_GPU_OR_SKIP();
  const ChainCase& c = GetParam();
  EngineSettings s;
  s.dims = c.dims;
  s.beta = c.beta;
  s.field = c.h;
  s.sequence = {c.algorithm};
  s.start = c.start;
  s.seed = 0x5eed0000ULL + c.dims.size();
  s.replicas = c.replicas;
  s.model = c.model;
  s.q = c.q;
  s.multispin = false;  // the byte-per-spin reference kernels
  const int every = 10;
  auto cpu = make_cpu_engine(s);
  const auto cpu_series = sample(*cpu, 0, c.sweeps / every, every);
  const std::vector<unsigned char> cpu_config = configuration_bytes(*cpu);

  // Every block size with the reference kernels; the multi-spin-coded path where it applies.
  std::vector<std::pair<int, bool>> runs{{64, false}, {256, false}, {1024, false}};
  EngineSettings packed = s;
  packed.multispin = true;
  if (uses_packed_ising(packed)) runs.insert(runs.end(), {{128, true}, {256, true}});
  for (const auto& [block, multispin] : runs) {
    s.cuda_block_size = block;
    s.multispin = multispin;
    SCOPED_TRACE(multispin ? "multi-spin coded" : "byte per spin");
    auto gpu = make_cuda_engine(s);
    const auto gpu_series = sample(*gpu, 0, c.sweeps / every, every);
    const std::vector<unsigned char> gpu_config = configuration_bytes(*gpu);
    ASSERT_EQ(gpu_series.size(), cpu_series.size());
    for (size_t o = 0; o < cpu_series.size(); ++o) {
      for (size_t k = 0; k < cpu_series[o].size(); ++k) {
        ASSERT_EQ(gpu_series[o][k], cpu_series[o][k])
            << "block " << block << ", observable " << o << ", measurement " << k;
      }
    }
    size_t differing = 0;
    for (size_t i = 0; i < cpu_config.size(); ++i) differing += cpu_config[i] != gpu_config[i];
    EXPECT_EQ(differing, 0u) << "block " << block << ": sites differing in the final configuration";
    for (size_t h = 0; h < cpu->histograms().size(); ++h) {
      EXPECT_EQ(gpu->histograms()[h].counts, cpu->histograms()[h].counts)
          << "block " << block << ", histogram " << cpu->histograms()[h].name;
      EXPECT_EQ(gpu->histograms()[h].samples, cpu->histograms()[h].samples);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, GpuChain,
                         ::testing::Values(ChainCase{"Ising2d_256_critical_metropolis",
                                                     {256, 256},
                                                     0.44068679350977151,
                                                     0.0,
                                                     UpdateAlgorithm::metropolis,
                                                     InitialState::hot,
                                                     1000},
                                           ChainCase{"Ising2d_32_five_replicas",
                                                     {32, 32},
                                                     0.44,
                                                     0.0,
                                                     UpdateAlgorithm::metropolis,
                                                     InitialState::hot,
                                                     2000,
                                                     5},
                                           // Rows of 8 words per colour: the multi-spin
                                           // kernel's runs of words, replicas in one launch.
                                           ChainCase{"Ising2d_16x512_two_replicas_heatbath_field",
                                                     {16, 512},
                                                     0.42,
                                                     0.05,
                                                     UpdateAlgorithm::heatbath,
                                                     InitialState::hot,
                                                     400,
                                                     2},
                                           ChainCase{"Ising3d_8_three_replicas_heatbath",
                                                     {8, 8, 8},
                                                     0.22,
                                                     0.02,
                                                     UpdateAlgorithm::heatbath,
                                                     InitialState::hot,
                                                     1000,
                                                     3},
                                           ChainCase{"Potts2d_q3_metropolis",
                                                     {64, 48},
                                                     1.0,
                                                     0.0,
                                                     UpdateAlgorithm::metropolis,
                                                     InitialState::hot,
                                                     600,
                                                     2,
                                                     ModelKind::potts,
                                                     3},
                                           ChainCase{"Potts3d_q7_heatbath_field",
                                                     {16, 10, 12},
                                                     0.9,
                                                     0.1,
                                                     UpdateAlgorithm::heatbath,
                                                     InitialState::hot,
                                                     400,
                                                     1,
                                                     ModelKind::potts,
                                                     7},
                                           ChainCase{"Potts2d_q256_heatbath",
                                                     {32, 32},
                                                     2.0,
                                                     0.0,
                                                     UpdateAlgorithm::heatbath,
                                                     InitialState::hot,
                                                     100,
                                                     1,
                                                     ModelKind::potts,
                                                     256},
                                           ChainCase{"Ising1d_ring_heatbath",
                                                     {4096},
                                                     0.7,
                                                     0.0,
                                                     UpdateAlgorithm::heatbath,
                                                     InitialState::hot,
                                                     1000,
                                                     4},
                                           ChainCase{"Potts1d_q4_metropolis",
                                                     {1000},
                                                     1.1,
                                                     0.0,
                                                     UpdateAlgorithm::metropolis,
                                                     InitialState::hot,
                                                     1000,
                                                     1,
                                                     ModelKind::potts,
                                                     4},
                                           ChainCase{"Ising2d_130x66_heatbath_field",
                                                     {130, 66},
                                                     0.5,
                                                     0.07,
                                                     UpdateAlgorithm::heatbath,
                                                     InitialState::cold,
                                                     1000},
                                           ChainCase{"Ising2d_1024_low_temperature",
                                                     {1024, 1024},
                                                     0.6,
                                                     0.0,
                                                     UpdateAlgorithm::metropolis,
                                                     InitialState::hot,
                                                     200},
                                           ChainCase{"Ising2d_2x512_thin",
                                                     {2, 512},
                                                     0.3,
                                                     -0.2,
                                                     UpdateAlgorithm::metropolis,
                                                     InitialState::hot,
                                                     500},
                                           ChainCase{"Ising3d_32_critical",
                                                     {32, 32, 32},
                                                     0.2216544,
                                                     0.0,
                                                     UpdateAlgorithm::metropolis,
                                                     InitialState::hot,
                                                     500},
                                           ChainCase{"Ising3d_16x8x24_heatbath",
                                                     {16, 8, 24},
                                                     0.25,
                                                     0.1,
                                                     UpdateAlgorithm::heatbath,
                                                     InitialState::hot,
                                                     500},
                                           ChainCase{"Ising4d_12_metropolis",
                                                     {12, 12, 12, 12},
                                                     0.1497,
                                                     0.0,
                                                     UpdateAlgorithm::metropolis,
                                                     InitialState::hot,
                                                     300},
                                           ChainCase{"Ising2d_2x64_smallest_packed_field",
                                                     {2, 64},
                                                     0.44,
                                                     0.3,
                                                     UpdateAlgorithm::metropolis,
                                                     InitialState::hot,
                                                     1000,
                                                     3},
                                           ChainCase{"Ising2d_64x320_heatbath_field",
                                                     {64, 320},
                                                     0.5,
                                                     -0.25,
                                                     UpdateAlgorithm::heatbath,
                                                     InitialState::cold,
                                                     500},
                                           ChainCase{"Ising3d_6x10x128_packed_heatbath",
                                                     {6, 10, 128},
                                                     0.24,
                                                     0.0,
                                                     UpdateAlgorithm::heatbath,
                                                     InitialState::hot,
                                                     300,
                                                     2},
                                           ChainCase{"Ising3d_16x16x64_packed_field",
                                                     {16, 16, 64},
                                                     0.2216544,
                                                     0.05,
                                                     UpdateAlgorithm::metropolis,
                                                     InitialState::hot,
                                                     300},
                                           ChainCase{"Ising4d_4x6x2x64_packed",
                                                     {4, 6, 2, 64},
                                                     0.15,
                                                     0.0,
                                                     UpdateAlgorithm::metropolis,
                                                     InitialState::hot,
                                                     200},
                                           ChainCase{"Ising4d_8x4x6x10_heatbath",
                                                     {8, 4, 6, 10},
                                                     0.2,
                                                     0.0,
                                                     UpdateAlgorithm::heatbath,
                                                     InitialState::cold,
                                                     300}),
                         [](const ::testing::TestParamInfo<ChainCase>& info) {
                           return std::string(info.param.name);
                         });

// A checkpoint's engine state moves between backends: half the sweeps on one, the rest on the
// other, give the chain of one backend alone (Ising: bit for bit; the structure factor's sums
// to rounding, cuFFT and FFTW round differently).
struct Split {
  std::vector<unsigned char> configuration;
  std::vector<ExactHistogram> histograms;
  StructureFactorSums structure_factor;
  std::vector<double> values;
};

Split run_split(const EngineSettings& s, bool first_on_gpu, bool second_on_gpu) {
  auto first = first_on_gpu ? make_cuda_engine(s) : make_cpu_engine(s);
  Split out;
  first->initialize();
  advance_measuring(*first, 0, 100, out.values);
  const EngineState half = first->state();
  auto second = second_on_gpu ? make_cuda_engine(s) : make_cpu_engine(s);
  second->restore(half);
  advance_measuring(*second, 100, 200, out.values);
  const EngineState end = second->state();
  out.configuration = end.configuration;
  out.histograms = end.histograms;
  out.structure_factor = end.structure_factor;
  return out;
}

class GpuCheckpoint : public ::testing::TestWithParam<std::vector<int64_t>> {};

TEST_P(GpuCheckpoint, EngineStateMovesBetweenBackends) {
  LATTICA_REQUIRE_GPU_OR_SKIP();
  EngineSettings s;
  s.dims = GetParam();
  s.beta = 0.22;
  s.field = 0.01;
  s.sequence = {UpdateAlgorithm::metropolis};
  s.seed = 77;
  s.replicas = 2;
  s.structure_factor_every = 2;
  const Split cpu = run_split(s, false, false);
  for (const auto& [first_gpu, second_gpu] : {std::pair{true, false}, std::pair{false, true}}) {
    const Split mixed = run_split(s, first_gpu, second_gpu);
    EXPECT_EQ(mixed.values, cpu.values);
    EXPECT_EQ(mixed.configuration, cpu.configuration);
    ASSERT_EQ(mixed.histograms.size(), cpu.histograms.size());
    for (size_t h = 0; h < cpu.histograms.size(); ++h)
      EXPECT_EQ(mixed.histograms[h].counts, cpu.histograms[h].counts);
    EXPECT_EQ(mixed.structure_factor.samples, cpu.structure_factor.samples);
    for (size_t k = 0; k < cpu.structure_factor.power_sum.size(); ++k)
      EXPECT_NEAR(mixed.structure_factor.power_sum[k], cpu.structure_factor.power_sum[k],
                  1e-10 * (1 + cpu.structure_factor.power_sum[k]));
  }
}

// Byte storage, and (last extent 128) the multi-spin-coded path on both backends.
INSTANTIATE_TEST_SUITE_P(Lattices, GpuCheckpoint,
                         ::testing::Values(std::vector<int64_t>{16, 12, 10},
                                           std::vector<int64_t>{6, 4, 128}));

TEST(GpuSnapshots, OverlappedCopiesHoldTheConfigurationWhenStarted) {
  LATTICA_REQUIRE_GPU_OR_SKIP();
  // Packed Ising staged and a chunk at a time, byte Ising, Potts and O(3) (float components).
  // Bit-packed Ising snapshots from both storages.
  struct Case {
    ModelKind model;
    std::vector<int64_t> dims;
    bool snapshots;
    bool bits = false;
  };
  for (const Case& c :
       {Case{ModelKind::ising, {6, 4, 128}, true}, Case{ModelKind::ising, {6, 4, 128}, false},
        Case{ModelKind::ising, {6, 4, 128}, true, true}, Case{ModelKind::ising, {10, 12}, true},
        Case{ModelKind::ising, {10, 24}, true, true}, Case{ModelKind::potts, {8, 10}, true},
        Case{ModelKind::on, {6, 8}, true}}) {
    EngineSettings s;
    s.model = c.model;
    s.dims = c.dims;
    s.beta = 0.3;
    s.precision = Precision::float32;
    s.seed = 5;
    s.replicas = 2;
    s.snapshots = c.snapshots;
    s.snapshot_bits = c.bits;
    SCOPED_TRACE(::testing::Message() << static_cast<int>(c.model) << " " << c.dims.size()
                                      << "D staged " << c.snapshots << " bits " << c.bits);
    auto engine = make_cuda_engine(s);
    expect_overlapped_snapshots(*engine, c.bits);
  }
}

}  // namespace
}  // namespace lattica::test

// Cluster moves (update.sequence entries "swendsen_wang" and "wolff") run the same Markov chain
// on the CUDA backend as on the CPU reference. Ising and Potts: bit for bit, every measurement
// (the m2_improved estimator included, at h = 0), histogram and final configuration, with byte
// storage at three block sizes and, where the lattice allows, multi-spin-coded storage on both
// backends (the chain does not depend on the storage either). O(n) and phi^4: to rounding over
// a short run, as tests/compare/gpu_continuous_test.cpp explains, and bit for bit between GPU
// block sizes.
//
// The continuous models' bonds are thresholds 1 - exp(-x) of products of the fields: a
// difference in the last bits between the host and device exp can move a bond's decision only
// when its random word falls within that difference of the threshold (about 1e-7 of the
// bonds for float fields, far fewer for double), and then a whole cluster differs. These seeds
// and lengths keep clear of that; a failure of that kind shows as one large difference, not a
// drift.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "tests/support/gpu.hpp"
#include "tests/support/statistics.hpp"

namespace lattica::test {
namespace {

constexpr UpdateAlgorithm kSw = UpdateAlgorithm::swendsen_wang;
constexpr UpdateAlgorithm kWolff = UpdateAlgorithm::wolff;
constexpr UpdateAlgorithm kMetropolis = UpdateAlgorithm::metropolis;
constexpr UpdateAlgorithm kHeatBath = UpdateAlgorithm::heatbath;

struct ClusterChainCase {
  const char* name;
  ModelKind model;
  int q;
  std::vector<int64_t> dims;
  double beta;
  double h;
  std::vector<UpdateAlgorithm> sequence;
  int replicas;
  int sweeps;
  InitialState start = InitialState::hot;
};

std::ostream& operator<<(std::ostream& os, const ClusterChainCase& c) { return os << c.name; }

EngineSettings settings_of(const ClusterChainCase& c) {
  EngineSettings s;
  s.model = c.model;
  s.q = c.q;
  s.dims = c.dims;
  s.beta = c.beta;
  s.field = c.h;
  s.sequence = c.sequence;
  s.wolff_clusters = 3;
  s.start = c.start;
  s.seed = 0xC1057E5ULL + c.dims.size();
  s.replicas = c.replicas;
  s.multispin = false;
  return s;
}

/// An engine's measurements, histograms and final configuration after sample().
struct Chain {
  std::vector<std::vector<double>> series;
  std::vector<ExactHistogram> histograms;
  std::vector<unsigned char> configuration;
};

constexpr int kEvery = 5;

Chain run_chain(Engine& engine, int sweeps) {
  Chain chain;
  chain.series = sample(engine, 0, sweeps / kEvery, kEvery);
  chain.histograms = engine.histograms();
  chain.configuration = configuration_bytes(engine);
  return chain;
}

void expect_same_chain(const Chain& got, const Chain& want, const std::string& run) {
  ASSERT_EQ(got.series.size(), want.series.size()) << run;
  for (size_t o = 0; o < want.series.size(); ++o) {
    ASSERT_EQ(got.series[o].size(), want.series[o].size()) << run;
    for (size_t k = 0; k < want.series[o].size(); ++k) {
      ASSERT_EQ(got.series[o][k], want.series[o][k])
          << run << ": replica x observable " << o << ", measurement " << k;
    }
  }
  size_t differing = 0;
  for (size_t i = 0; i < want.configuration.size() && i < got.configuration.size(); ++i)
    differing += got.configuration[i] != want.configuration[i];
  EXPECT_EQ(got.configuration.size(), want.configuration.size()) << run;
  EXPECT_EQ(differing, 0u) << run << ": bytes differing in the final configuration";
  ASSERT_EQ(got.histograms.size(), want.histograms.size()) << run;
  for (size_t h = 0; h < want.histograms.size(); ++h) {
    EXPECT_EQ(got.histograms[h].counts, want.histograms[h].counts)
        << run << ", histogram " << want.histograms[h].name;
    EXPECT_EQ(got.histograms[h].samples, want.histograms[h].samples) << run;
  }
}

class GpuClusterChain : public ::testing::TestWithParam<ClusterChainCase> {};

TEST_P(GpuClusterChain, IdenticalToCpuReference) {
  LATTICA_REQUIRE_GPU_OR_SKIP();
  const ClusterChainCase& c = GetParam();
  EngineSettings s = settings_of(c);
  auto cpu = make_cpu_engine(s);
  const Chain reference = run_chain(*cpu, c.sweeps);

  // The estimator is part of what is compared wherever the model has it.
  const std::vector<std::string> names = cpu->observable_names();
  const bool estimating = c.h == 0 && c.model != ModelKind::on && c.model != ModelKind::phi4;
  EXPECT_EQ(std::find(names.begin(), names.end(), "m2_improved") != names.end(), estimating);
  // The clusters moved: the chain left its start.
  auto start = make_cpu_engine(s);
  start->initialize();
  EXPECT_NE(configuration_bytes(*start), reference.configuration) << "no cluster moved";

  struct Run {
    bool gpu;
    bool multispin;
    int block;
  };
  std::vector<Run> runs{{true, false, 64}, {true, false, 256}, {true, false, 1024}};
  EngineSettings packed = s;
  packed.multispin = true;
  if (uses_packed_ising(packed))
    runs.insert(runs.end(), {{false, true, 256}, {true, true, 128}, {true, true, 256}});
  for (const Run& run : runs) {
    s.multispin = run.multispin;
    s.cuda_block_size = run.block;
    const std::string what = std::string(run.gpu ? "GPU" : "CPU") +
                             (run.multispin ? ", multi-spin coded" : ", byte per spin") +
                             ", block " + std::to_string(run.block);
    auto engine = run.gpu ? make_cuda_engine(s) : make_cpu_engine(s);
    expect_same_chain(run_chain(*engine, c.sweeps), reference, what);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Discrete, GpuClusterChain,
    ::testing::Values(
        ClusterChainCase{"Ising2d_128_sw_critical",
                         ModelKind::ising,
                         2,
                         {128, 128},
                         0.44068679350977151,
                         0.0,
                         {kSw},
                         2,
                         200},
        ClusterChainCase{
            "Ising2d_96x130_wolff", ModelKind::ising, 2, {96, 130}, 0.44, 0.0, {kWolff}, 3, 300},
        ClusterChainCase{"Ising2d_64x192_metropolis_sw_field",
                         ModelKind::ising,
                         2,
                         {64, 192},
                         0.45,
                         0.1,
                         {kMetropolis, kSw},
                         2,
                         200},
        ClusterChainCase{"Ising2d_50x64_wolff_field_cold",
                         ModelKind::ising,
                         2,
                         {50, 64},
                         0.5,
                         -0.08,
                         {kWolff},
                         2,
                         200,
                         InitialState::cold},
        ClusterChainCase{"Ising2d_512_sw_low_temperature",
                         ModelKind::ising,
                         2,
                         {512, 512},
                         0.6,
                         0.0,
                         {kSw},
                         1,
                         60},
        ClusterChainCase{"Ising2d_256x200_sw_high_temperature",
                         ModelKind::ising,
                         2,
                         {256, 200},
                         0.2,
                         0.0,
                         {kSw, kWolff},
                         1,
                         100},
        ClusterChainCase{"Ising3d_16x12x64_wolff_sw_heatbath_field",
                         ModelKind::ising,
                         2,
                         {16, 12, 64},
                         0.2216544,
                         -0.05,
                         {kWolff, kSw, kHeatBath},
                         2,
                         100},
        ClusterChainCase{
            "Ising3d_10x12x14_sw", ModelKind::ising, 2, {10, 12, 14}, 0.25, 0.0, {kSw}, 2, 200},
        ClusterChainCase{"Ising4d_6x4x6x64_sw_wolff",
                         ModelKind::ising,
                         2,
                         {6, 4, 6, 64},
                         0.15,
                         0.0,
                         {kSw, kWolff},
                         1,
                         100},
        ClusterChainCase{
            "Ising1d_4096_sw_four_replicas", ModelKind::ising, 2, {4096}, 0.7, 0.0, {kSw}, 4, 200},
        ClusterChainCase{
            "Potts2d_q3_sw_field", ModelKind::potts, 3, {64, 48}, 1.0050525, 0.2, {kSw}, 2, 200},
        // Tiles that divide the lattice: flattened and moved in one kernel on the GPU.
        ClusterChainCase{"Potts2d_q4_64x256_sw_aligned",
                         ModelKind::potts,
                         4,
                         {64, 256},
                         1.0986123,
                         0.0,
                         {kSw},
                         3,
                         100},
        ClusterChainCase{"Ising3d_16x32x64_sw_aligned_field",
                         ModelKind::ising,
                         2,
                         {16, 32, 64},
                         0.2216544,
                         0.02,
                         {kSw, kMetropolis},
                         2,
                         100},
        ClusterChainCase{"Potts2d_q3_wolff_metropolis_field",
                         ModelKind::potts,
                         3,
                         {50, 34},
                         1.0050525,
                         0.2,
                         {kWolff, kMetropolis},
                         2,
                         200},
        ClusterChainCase{
            "Potts2d_q3_wolff", ModelKind::potts, 3, {64, 64}, 1.0050525, 0.0, {kWolff}, 2, 200},
        ClusterChainCase{"Potts3d_q3_sw_heatbath",
                         ModelKind::potts,
                         3,
                         {12, 10, 8},
                         0.55,
                         0.0,
                         {kSw, kHeatBath},
                         2,
                         150}),
    [](const ::testing::TestParamInfo<ClusterChainCase>& info) {
      return std::string(info.param.name);
    });

// ---- continuous models: to rounding --------------------------------------------------------

struct ContinuousClusterCase {
  const char* name;
  ModelKind model;
  int n;
  Precision precision;
  std::vector<int64_t> dims;
  double coupling;  ///< beta (O(n)) or kappa (phi^4)
  double h;
  std::vector<UpdateAlgorithm> sequence;
  int replicas;
};

std::ostream& operator<<(std::ostream& os, const ContinuousClusterCase& c) { return os << c.name; }

EngineSettings settings_of(const ContinuousClusterCase& c) {
  EngineSettings s;
  s.model = c.model;
  s.n = c.n;
  s.precision = c.precision;
  s.dims = c.dims;
  s.beta = c.coupling;
  s.kappa = c.coupling;
  s.lambda = 1.1;
  s.field = c.h;
  s.sequence = c.sequence;
  s.wolff_clusters = 3;
  s.replicas = c.replicas;
  s.seed = 0xC1057E6;
  return s;
}

/// The configuration as doubles, whatever the precision.
std::vector<double> configuration_values(Engine& engine) {
  const std::vector<unsigned char> bytes = configuration_bytes(engine);
  std::vector<double> values;
  if (engine.snapshot_format().type == ElementType::float32) {
    std::vector<float> f(bytes.size() / 4);
    std::memcpy(f.data(), bytes.data(), bytes.size());
    values.assign(f.begin(), f.end());
  } else {
    values.resize(bytes.size() / 8);
    std::memcpy(values.data(), bytes.data(), bytes.size());
  }
  return values;
}

/// Largest absolute difference of two equally long vectors.
double worst_difference(const std::vector<double>& a, const std::vector<double>& b) {
  EXPECT_EQ(a.size(), b.size());
  double worst = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i)
    worst = std::max(worst, std::fabs(a[i] - b[i]));
  return worst;
}

class GpuClusterContinuous : public ::testing::TestWithParam<ContinuousClusterCase> {};

/// Sweeps over which CPU and GPU chains must agree to the tolerance.
constexpr int kShortRun = 2;

TEST_P(GpuClusterContinuous, SameChainAsCpuToRounding) {
  LATTICA_REQUIRE_GPU_OR_SKIP();
  const ContinuousClusterCase& c = GetParam();
  const double tolerance = c.precision == Precision::float32 ? 1e-3 : 1e-7;
  EngineSettings s = settings_of(c);
  std::vector<unsigned char> first_gpu;  // the GPU configuration at the first block size
  for (int block : {64, 256, 1024}) {
    s.cuda_block_size = block;
    auto cpu = make_cpu_engine(s);
    auto gpu = make_cuda_engine(s);
    cpu->initialize();
    gpu->initialize();
    for (int sweeps = 1; sweeps <= kShortRun; ++sweeps) {
      cpu->sweep(static_cast<uint64_t>(sweeps - 1), 1);
      gpu->sweep(static_cast<uint64_t>(sweeps - 1), 1);
      EXPECT_LE(worst_difference(configuration_values(*cpu), configuration_values(*gpu)), tolerance)
          << "block " << block << ", after " << sweeps << " sweeps";
    }
    MeasurementBatch on_cpu, on_gpu;
    cpu->measure();
    gpu->measure();
    cpu->collect(on_cpu);
    gpu->collect(on_gpu);
    EXPECT_LE(worst_difference(on_cpu.values, on_gpu.values), tolerance)
        << "block " << block << ": observables after " << kShortRun << " sweeps";
    // On the GPU the chain does not depend on the block size at all.
    const std::vector<unsigned char> bytes = configuration_bytes(*gpu);
    if (first_gpu.empty()) {
      first_gpu = bytes;
    } else {
      EXPECT_TRUE(bytes == first_gpu) << "GPU block " << block << " against block 64";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Models, GpuClusterContinuous,
    ::testing::Values(ContinuousClusterCase{"Heisenberg3d_double_sw_metropolis",
                                            ModelKind::on,
                                            3,
                                            Precision::float64,
                                            {16, 16, 16},
                                            0.69,
                                            0.0,
                                            {kSw, kMetropolis},
                                            2},
                      ContinuousClusterCase{"Heisenberg3d_float_sw_metropolis_field",
                                            ModelKind::on,
                                            3,
                                            Precision::float32,
                                            {12, 12, 12},
                                            0.7,
                                            0.1,
                                            {kSw, kMetropolis},
                                            1},
                      ContinuousClusterCase{"Xy2d_double_wolff_sw_metropolis",
                                            ModelKind::on,
                                            2,
                                            Precision::float64,
                                            {32, 30},
                                            1.1,
                                            0.0,
                                            {kWolff, kSw, kMetropolis},
                                            2},
                      ContinuousClusterCase{"Heisenberg2d_float_sw_aligned",
                                            ModelKind::on,
                                            3,
                                            Precision::float32,
                                            {32, 128},
                                            0.9,
                                            0.0,
                                            {kSw, kMetropolis},
                                            2},
                      ContinuousClusterCase{"Phi4_3d_double_sw_metropolis",
                                            ModelKind::phi4,
                                            0,
                                            Precision::float64,
                                            {16, 16, 16},
                                            0.18,
                                            0.0,
                                            {kSw, kMetropolis},
                                            2},
                      ContinuousClusterCase{"Phi4_2d_float_sw_metropolis_field",
                                            ModelKind::phi4,
                                            0,
                                            Precision::float32,
                                            {64, 32},
                                            0.25,
                                            0.05,
                                            {kSw, kMetropolis},
                                            1},
                      ContinuousClusterCase{"Phi4_4d_double_wolff_sw_metropolis",
                                            ModelKind::phi4,
                                            0,
                                            Precision::float64,
                                            {6, 6, 6, 6},
                                            0.1,
                                            0.0,
                                            {kWolff, kSw, kMetropolis},
                                            1}),
    [](const ::testing::TestParamInfo<ContinuousClusterCase>& info) {
      return std::string(info.param.name);
    });

}  // namespace
}  // namespace lattica::test

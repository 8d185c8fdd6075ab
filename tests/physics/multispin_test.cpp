// The multi-spin-coded Ising path (kernels/models/ising_packed.hpp) runs the chain of the
// byte-per-spin reference bit for bit: every measurement, histogram, structure factor and final
// configuration, over sizes down to the smallest it accepts, dimensions 1 to 4, fields,
// Metropolis and heat bath, replicas, starts, and checkpoints moving between the two layouts.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/statistics.hpp"

namespace lattica::test {
namespace {

struct PackedCase {
  const char* name;
  std::vector<int64_t> dims;
  double beta;
  double h;
  std::vector<UpdateAlgorithm> sequence;
  InitialState start;
  int sweeps;
  int replicas = 1;
};

std::ostream& operator<<(std::ostream& os, const PackedCase& c) { return os << c.name; }

EngineSettings settings_of(const PackedCase& c, bool multispin) {
  EngineSettings s;
  s.dims = c.dims;
  s.beta = c.beta;
  s.field = c.h;
  s.sequence = c.sequence;
  s.start = c.start;
  s.seed = 0xb175ULL + c.dims.size();
  s.replicas = c.replicas;
  s.multispin = multispin;
  s.cpu_threads = 2;
  s.structure_factor_every = 3;
  return s;
}

class Multispin : public ::testing::TestWithParam<PackedCase> {};

TEST_P(Multispin, IdenticalToByteReference) {
  const PackedCase& c = GetParam();
  ASSERT_TRUE(uses_packed_ising(settings_of(c, true)));
  ASSERT_FALSE(uses_packed_ising(settings_of(c, false)));
  auto reference = make_cpu_engine(settings_of(c, false));
  auto packed = make_cpu_engine(settings_of(c, true));
  const int every = 5;
  const auto want = sample(*reference, 0, c.sweeps / every, every);
  const auto got = sample(*packed, 0, c.sweeps / every, every);
  EXPECT_EQ(got, want);  // exact doubles from exact integer sums
  EXPECT_EQ(configuration_bytes(*packed), configuration_bytes(*reference));
  for (size_t h = 0; h < reference->histograms().size(); ++h) {
    EXPECT_EQ(packed->histograms()[h].counts, reference->histograms()[h].counts);
  }
  StructureFactorSums a, b;
  ASSERT_TRUE(reference->structure_factor(a));
  ASSERT_TRUE(packed->structure_factor(b));
  EXPECT_EQ(b.power_sum, a.power_sum);  // the same field through the same FFT
  // The chain moved: not a frozen configuration compared with itself.
  ASSERT_FALSE(want.empty());
  EXPECT_NE(want[0].front(), want[0].back());
}

INSTANTIATE_TEST_SUITE_P(
    Cases, Multispin,
    ::testing::Values(PackedCase{"Smallest_2x64_field",
                                 {2, 64},
                                 0.44,
                                 0.3,
                                 {UpdateAlgorithm::metropolis},
                                 InitialState::hot,
                                 200},
                      PackedCase{"Critical_64x64",
                                 {64, 64},
                                 0.44068679350977151,
                                 0.0,
                                 {UpdateAlgorithm::metropolis},
                                 InitialState::hot,
                                 300},
                      PackedCase{"HeatBath_6x128_negative_field_replicas",
                                 {6, 128},
                                 0.6,
                                 -0.45,
                                 {UpdateAlgorithm::heatbath},
                                 InitialState::cold,
                                 200,
                                 3},
                      PackedCase{"HeatBath_then_Metropolis_10x192",
                                 {10, 192},
                                 0.35,
                                 0.0,
                                 {UpdateAlgorithm::heatbath, UpdateAlgorithm::metropolis},
                                 InitialState::hot,
                                 100,
                                 2},
                      PackedCase{"LowTemperature_16x64",
                                 {16, 64},
                                 1.0,
                                 0.0,
                                 {UpdateAlgorithm::metropolis},
                                 InitialState::hot,
                                 100},
                      PackedCase{"Ring_1d_256",
                                 {256},
                                 0.8,
                                 0.1,
                                 {UpdateAlgorithm::metropolis},
                                 InitialState::hot,
                                 300,
                                 2},
                      PackedCase{"Cubic_6x4x64_heatbath_field",
                                 {6, 4, 64},
                                 0.22,
                                 -0.15,
                                 {UpdateAlgorithm::heatbath},
                                 InitialState::hot,
                                 100,
                                 2},
                      PackedCase{"Cubic_8x8x64_critical",
                                 {8, 8, 64},
                                 0.2216544,
                                 0.0,
                                 {UpdateAlgorithm::metropolis},
                                 InitialState::hot,
                                 100},
                      PackedCase{"Hypercubic_4x2x6x64",
                                 {4, 2, 6, 64},
                                 0.15,
                                 0.05,
                                 {UpdateAlgorithm::metropolis},
                                 InitialState::hot,
                                 60}),
    [](const ::testing::TestParamInfo<PackedCase>& info) { return std::string(info.param.name); });

TEST(Multispin, MeasuringEverySweepInTheLastPass) {
  // sim measures with sweep_and_measure(), which the packed engine folds into the last pass's
  // second colour; with one sweep per measurement every pass ends in a measurement.
  for (const PackedCase& c :
       {PackedCase{"", {4, 64}, 0.5, 0.2, {UpdateAlgorithm::metropolis}, InitialState::hot, 40, 2},
        PackedCase{"",
                   {4, 6, 64},
                   0.3,
                   0.0,
                   {UpdateAlgorithm::metropolis, UpdateAlgorithm::heatbath},
                   InitialState::cold,
                   30}}) {
    auto reference = make_cpu_engine(settings_of(c, false));
    auto packed = make_cpu_engine(settings_of(c, true));
    EXPECT_EQ(sample(*packed, 3, c.sweeps, 1), sample(*reference, 3, c.sweeps, 1));
  }
}

TEST(Multispin, OverlappedSnapshots) {
  PackedCase c{"", {6, 128}, 0.4, 0.02, {UpdateAlgorithm::metropolis}, InitialState::hot, 0, 2};
  for (bool staged : {true, false}) {
    for (bool bits : {false, true}) {
      for (bool multispin : {true, false}) {
        SCOPED_TRACE(::testing::Message()
                     << (staged ? "staged" : "a chunk at a time") << (bits ? ", bits" : ", bytes")
                     << (multispin ? ", packed" : ", byte storage"));
        EngineSettings s = settings_of(c, multispin);
        s.structure_factor_every = 0;
        s.snapshots = staged;  // without snapshots between sweeps no lexicographic copy is kept
        s.snapshot_bits = bits;
        if (multispin) {
          EXPECT_EQ(packed_keeps_lexicographic(s), staged && !bits);
        }
        auto engine = make_cpu_engine(s);
        expect_overlapped_snapshots(*engine, bits);
      }
    }
  }
}

TEST(Multispin, CheckpointsMoveBetweenLayouts) {
  const PackedCase c{"", {6, 128}, 0.4, 0.02, {UpdateAlgorithm::metropolis}, InitialState::hot,
                     0,  2};
  std::vector<double> want, got_packed_first, got_bytes_first;
  std::vector<unsigned char> want_configuration;
  {
    auto reference = make_cpu_engine(settings_of(c, false));
    reference->initialize();
    advance_measuring(*reference, 0, 100, want);
    want_configuration = reference->state().configuration;
  }
  for (bool packed_first : {true, false}) {
    std::vector<double>& got = packed_first ? got_packed_first : got_bytes_first;
    auto first = make_cpu_engine(settings_of(c, packed_first));
    first->initialize();
    advance_measuring(*first, 0, 50, got);
    const EngineState half = first->state();
    auto second = make_cpu_engine(settings_of(c, !packed_first));
    second->restore(half);
    advance_measuring(*second, 50, 100, got);
    EXPECT_EQ(second->state().configuration, want_configuration) << packed_first;
    EXPECT_EQ(got, want) << packed_first;
  }
}

TEST(Multispin, LatticesThatCannotPackUseTheByteLayout) {
  EngineSettings s;
  s.dims = {64, 96};  // the last extent is not a multiple of 64
  EXPECT_FALSE(uses_packed_ising(s));
  s.dims = {96, 64};
  EXPECT_TRUE(uses_packed_ising(s));
  s.model = ModelKind::potts;
  EXPECT_FALSE(uses_packed_ising(s));
  // Packed, an Ising lattice needs about an eighth of the memory.
  EngineSettings big;
  big.dims = {65536, 65536};
  big.multispin = false;
  const size_t bytes = engine_bytes(big);
  big.multispin = true;
  EXPECT_LT(engine_bytes(big), bytes / 8);
  // 2^36 spins fit in an 80 GB GPU.
  big.dims = {262144, 262144};
  EXPECT_LT(engine_bytes(big), size_t(9) << 30);
}

}  // namespace
}  // namespace lattica::test

// Parallel tempering on the CPU reference backend: per-replica couplings give each slot its
// rung's chain, the tempered chain does not depend on threads, on how sweeps are cut or on a
// checkpoint in between, and every rung samples its own Boltzmann distribution: exact
// enumeration of 4 x 4 Ising and 4 x 2 Potts (q = 3), and Kaufman's finite-lattice energy of
// the 2D Ising model on a ladder across the transition.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

#include "sim/checkpoint.hpp"
#include "tests/support/exact_ising.hpp"
#include "tests/support/exact_potts.hpp"
#include "tests/support/kaufman.hpp"
#include "tests/support/settings.hpp"
#include "tests/support/statistics.hpp"

namespace lattica::test {
namespace {

TemperingSettings beta_ladder(std::vector<double> betas) {
  TemperingSettings t;
  t.beta = std::move(betas);
  return t;
}

/// Ising on `dims` with `ladders` ladders of the couplings in `tempering` (beta 0.35 when it
/// does not temper beta).
EngineSettings ising_ladder(std::vector<int64_t> dims, TemperingSettings tempering, int ladders,
                            UpdateAlgorithm algorithm) {
  EngineSettings s;
  s.dims = std::move(dims);
  s.tempering = std::move(tempering);
  s.beta = s.tempering.beta.empty() ? 0.35 : s.tempering.beta.front();
  s.replicas = ladders * s.tempering.rungs();
  s.sequence = {algorithm};
  s.seed = 2106;
  s.cpu_threads = 1;  // small lattices: a parallel region per half-sweep costs more than it gains
  s.measurement_capacity = kSampleBatch;
  return s;
}

/// Per rung, observable `o`'s series averaged over the ladders (independent chains).
std::vector<std::vector<double>> per_rung(const std::vector<std::vector<double>>& series, int rungs,
                                          int ladders, int observables, int o) {
  std::vector<std::vector<double>> out(static_cast<size_t>(rungs));
  for (int k = 0; k < rungs; ++k) {
    const size_t n = series[static_cast<size_t>(k * observables + o)].size();
    out[k].assign(n, 0.0);
    for (int l = 0; l < ladders; ++l) {
      const auto& x = series[static_cast<size_t>((l * rungs + k) * observables + o)];
      for (size_t i = 0; i < n; ++i) out[k][i] += x[i] / ladders;
    }
  }
  return out;
}

// Without exchanges (none due in the run), slot k is the chain of replica k of an untempered
// run at rung k's couplings: the per-replica tables give each replica its own couplings.
class TemperingSlots : public ::testing::TestWithParam<UpdateAlgorithm> {};

TEST_P(TemperingSlots, WithoutExchangesEachSlotIsItsRungsChain) {
  const std::vector<double> betas = {0.25, 0.41, 0.6};
  EngineSettings tempered = ising_ladder({8, 6}, beta_ladder(betas), 1, GetParam());
  tempered.field = 0.07;
  tempered.tempering.exchange_every = 1000000;
  auto engine = make_cpu_engine(tempered);
  const auto series = sample(*engine, 5, 40, 2);
  for (size_t k = 0; k < betas.size(); ++k) {
    EngineSettings plain = tempered;
    plain.tempering = {};
    plain.beta = betas[k];
    auto reference = make_cpu_engine(plain);
    const auto expected = sample(*reference, 5, 40, 2);
    EXPECT_EQ(series[2 * k], expected[2 * k]) << "rung " << k;
    EXPECT_EQ(series[2 * k + 1], expected[2 * k + 1]) << "rung " << k;
  }
}

INSTANTIATE_TEST_SUITE_P(Passes, TemperingSlots,
                         ::testing::Values(UpdateAlgorithm::metropolis, UpdateAlgorithm::heatbath,
                                           UpdateAlgorithm::swendsen_wang, UpdateAlgorithm::wolff));

TEST(Tempering, ChainIndependentOfThreadsCutsAndCheckpoints) {
  EngineSettings s =
      ising_ladder({6, 6}, beta_ladder({0.2, 0.3, 0.4, 0.5}), 2, UpdateAlgorithm::metropolis);
  s.tempering.exchange_every = 3;
  s.cpu_threads = 1;
  auto reference = make_cpu_engine(s);
  reference->initialize();
  std::vector<double> reference_values;
  advance_measuring(*reference, 0, 120, reference_values);
  const TemperingState expected = reference->tempering();
  EXPECT_GT(expected.accepts[0] + expected.accepts[1] + expected.accepts[2], 0);

  s.cpu_threads = 2;
  auto first = make_cpu_engine(s);
  first->initialize();
  std::vector<double> values;
  advance_measuring(*first, 0, 50, values);
  const EngineState checkpoint = first->state();
  auto second = make_cpu_engine(s);
  second->restore(checkpoint);
  advance_measuring(*second, 50, 120, values);
  EXPECT_EQ(values, reference_values);
  EXPECT_EQ(second->tempering().rung_of_slot, reference->tempering().rung_of_slot);
  EXPECT_EQ(second->tempering().accepts, reference->tempering().accepts);
  EXPECT_EQ(second->tempering().round_trip_sweeps, reference->tempering().round_trip_sweeps);
  EXPECT_EQ(configuration_bytes(*second), configuration_bytes(*reference));

  // A checkpoint of another ladder is refused.
  EngineSettings other = s;
  other.tempering.beta = {0.2, 0.3, 0.4};
  other.replicas = 6;
  EngineState wrong = checkpoint;
  wrong.configuration.resize(static_cast<size_t>(6 * 36));
  EXPECT_THROW(make_cpu_engine(other)->restore(wrong), std::invalid_argument);
}

// A round's sums come from the last pass of the sweep before it (Ising and Potts updates fused
// with their sums), or, where a measurement takes that place, from a pass over the
// configurations: both runs take the same decisions, so the ladders end alike.
TEST(Tempering, RoundsFromFusedSumsAsFromTheConfigurations) {
  EngineSettings ising =
      ising_ladder({6, 8}, beta_ladder({0.2, 0.3, 0.4, 0.5}), 2, UpdateAlgorithm::metropolis);
  ising.field = 0.1;
  EngineSettings potts =
      ising_ladder({4, 6}, beta_ladder({0.5, 0.8, 1.1}), 2, UpdateAlgorithm::heatbath);
  potts.model = ModelKind::potts;
  potts.q = 3;
  for (const EngineSettings& s : {ising, potts}) {
    for (int every : {1, 3}) {
      SCOPED_TRACE(::testing::Message() << "q " << s.q << ", exchange every " << every);
      EngineSettings run = s;
      run.tempering.exchange_every = every;
      auto measured_every_sweep = make_cpu_engine(run);  // every round sums the configurations
      sample(*measured_every_sweep, 0, 120, 1);
      auto fused = make_cpu_engine(run);  // rounds after unmeasured sweeps take the fused sums
      fused->initialize();
      std::vector<double> values;
      advance_measuring(*fused, 0, 120, values);
      const TemperingState want = measured_every_sweep->tempering();
      const TemperingState got = fused->tempering();
      EXPECT_GT(std::accumulate(want.accepts.begin(), want.accepts.end(), int64_t{0}), 0);
      EXPECT_EQ(got.rung_of_slot, want.rung_of_slot);
      EXPECT_EQ(got.accepts, want.accepts);
      EXPECT_EQ(configuration_bytes(*fused), configuration_bytes(*measured_every_sweep));
    }
  }
}

// The feedback-optimised ladder (tempering.feedback) is part of the chain: a checkpoint in the
// middle of the tuning or after it resumes to the same ladder, statistics and configurations as
// the uninterrupted run, whatever the threads.
TEST(TemperingFeedback, ResumesMidTuningAndAfterItAsUninterrupted) {
  EngineSettings s =
      ising_ladder({6, 6}, beta_ladder({0.2, 0.25, 0.3, 0.45}), 1, UpdateAlgorithm::metropolis);
  s.tempering.feedback = 3;
  s.tempering.thermalization = 200;  // steps before sweeps 50, 100, 150
  auto reference = make_cpu_engine(s);
  reference->initialize();
  std::vector<double> reference_values;
  advance_measuring(*reference, 0, 300, reference_values);
  const TemperingState expected = reference->tempering();
  ASSERT_EQ(expected.feedback_ladders.size(), 12u);
  EXPECT_EQ(expected.ladder, std::vector<double>(expected.feedback_ladders.begin() + 8,
                                                 expected.feedback_ladders.end()));
  EXPECT_NE(expected.ladder, s.tempering.beta) << "the feedback never moved the ladder";
  EXPECT_EQ(expected.ladder.front(), 0.2);
  EXPECT_EQ(expected.ladder.back(), 0.45);

  for (int64_t cut : {75, 100, 250}) {  // mid-tuning, at a step's sweep, frozen
    s.cpu_threads = 2;
    auto first = make_cpu_engine(s);
    first->initialize();
    std::vector<double> values;
    advance_measuring(*first, 0, cut, values);
    Checkpoint checkpoint;  // through a checkpoint file, as sim writes and reads it
    checkpoint.engine = first->state();
    checkpoint.sweep = cut;
    const std::string file = testing::TempDir() + "lattica_feedback.checkpoint";
    write_checkpoint(file, checkpoint);
    auto second = make_cpu_engine(s);
    second->restore(read_checkpoint(file).engine);
    std::remove(file.c_str());
    advance_measuring(*second, cut, 300, values);
    const TemperingState t = second->tempering();
    EXPECT_EQ(values, reference_values) << "cut at " << cut;
    EXPECT_EQ(t.ladder, expected.ladder) << "cut at " << cut;
    EXPECT_EQ(t.feedback_up_fraction, expected.feedback_up_fraction) << "cut at " << cut;
    EXPECT_EQ(t.up_visits, expected.up_visits) << "cut at " << cut;
    EXPECT_EQ(t.round_trip_sweeps, expected.round_trip_sweeps) << "cut at " << cut;
    EXPECT_EQ(configuration_bytes(*second), configuration_bytes(*reference)) << "cut at " << cut;
  }
}

// Every tempered coupling can be tuned: the engine rebuilds its rungs' Params from the moved
// ladder (ends fixed, strictly monotone) and goes on exchanging with them.
TEST(TemperingFeedback, MovesEveryKindOfLadder) {
  std::vector<std::pair<const char*, EngineSettings>> cases;
  cases.push_back(
      {"ising h", ising_ladder({6, 6}, TemperingSettings{}, 1, UpdateAlgorithm::metropolis)});
  cases.back().second.tempering.field = {0.0, 0.02, 0.04, 0.5};
  EngineSettings potts =
      ising_ladder({6, 6}, beta_ladder({0.6, 0.7, 0.8, 1.1}), 1, UpdateAlgorithm::metropolis);
  potts.model = ModelKind::potts;
  potts.q = 3;
  cases.push_back({"potts beta", potts});
  EngineSettings on = potts;
  on.model = ModelKind::on;
  on.n = 2;
  on.tempering.beta = {0.5, 0.6, 0.7, 1.1};
  cases.push_back({"XY beta", on});
  EngineSettings phi4 = phi4_settings({6, 6}, 0.15, 0.5, 0.0, {UpdateAlgorithm::metropolis});
  phi4.tempering.kappa = {0.15, 0.17, 0.19, 0.26};
  phi4.replicas = 4;
  cases.push_back({"phi4 kappa", phi4});
  for (auto& [name, settings] : cases) {
    settings.replicas = 4;
    settings.tempering.feedback = 2;
    settings.tempering.thermalization = 300;
    const std::vector<double> input = settings.tempering.tuned_ladder();
    auto engine = make_cpu_engine(settings);
    sample(*engine, 300, 20, 5);
    const TemperingState t = engine->tempering();
    EXPECT_NE(t.ladder, input) << name;
    EXPECT_EQ(t.ladder.front(), input.front()) << name;
    EXPECT_EQ(t.ladder.back(), input.back()) << name;
    for (size_t k = 0; k + 1 < t.ladder.size(); ++k)
      EXPECT_LT(t.ladder[k], t.ladder[k + 1]) << name;
    EXPECT_GT(t.accepts[2], 0) << name << ": the moved top pair exchanges";
  }
}

/// Expects every rung's mean energy within 4 standard errors of `exact[k]`, and that the test
/// could see a chain that mixed its rungs' couplings (the ladder's mean energy).
void expect_every_rung(const std::vector<std::vector<double>>& energy,
                       const std::vector<double>& exact, const char* what) {
  const double mixed = std::accumulate(exact.begin(), exact.end(), 0.0) / exact.size();
  double power = 0;
  for (size_t k = 0; k < exact.size(); ++k) {
    const Estimate e = binned_estimate(energy[k], 40);
    std::printf("[ rung %zu  ] %s: e = %.6f +- %.6f, exact %.6f, z = %.2f\n", k, what, e.mean,
                e.error, exact[k], z_score(e, exact[k]));
    EXPECT_LT(std::fabs(z_score(e, exact[k])), 4.0) << what << " rung " << k;
    power = std::max(power, std::fabs(mixed - exact[k]) / e.error);
  }
  EXPECT_GT(power, 20.0) << what << ": the errors are too large to see mixed-up couplings";
}

class TemperingExactIsing : public ::testing::TestWithParam<UpdateAlgorithm> {};

TEST_P(TemperingExactIsing, EveryRungOf4x4MatchesEnumeration) {
  const std::vector<double> betas = {0.15, 0.3, 0.45, 0.6, 0.8};
  EngineSettings s = ising_ladder({4, 4}, beta_ladder(betas), 4, GetParam());
  s.field = 0.1;
  auto engine = make_cpu_engine(s);
  const auto series = sample(*engine, 500, 16000, 1);
  std::vector<double> exact;
  for (double beta : betas) exact.push_back(exact_ising({4, 4}, beta, 0.1).energy);
  expect_every_rung(per_rung(series, 5, 4, 2, 0), exact, "Ising 4x4");
  const TemperingState t = engine->tempering();
  for (size_t k = 0; k < t.attempts.size(); ++k) {
    EXPECT_GT(t.accepts[k], 0);
    EXPECT_LT(t.accepts[k], t.attempts[k]);
  }
}

INSTANTIATE_TEST_SUITE_P(Passes, TemperingExactIsing,
                         ::testing::Values(UpdateAlgorithm::metropolis,
                                           UpdateAlgorithm::swendsen_wang));

TEST(TemperingExact, FieldLadderOf4x4MatchesEnumeration) {
  const std::vector<double> fields = {-0.6, -0.2, 0.2, 0.6};
  TemperingSettings ladder;
  ladder.field = fields;
  EngineSettings s = ising_ladder({4, 4}, ladder, 4, UpdateAlgorithm::heatbath);
  auto engine = make_cpu_engine(s);
  const auto series = sample(*engine, 500, 16000, 1);
  std::vector<double> exact;
  for (double h : fields) exact.push_back(exact_ising({4, 4}, 0.35, h).energy);
  expect_every_rung(per_rung(series, 4, 4, 2, 0), exact, "Ising 4x4 field ladder");
}

TEST(TemperingExact, PottsQ3EveryRungMatchesEnumeration) {
  const std::vector<double> betas = {0.4, 0.8, 1.2, 1.6};
  EngineSettings s = ising_ladder({4, 2}, beta_ladder(betas), 4, UpdateAlgorithm::heatbath);
  s.model = ModelKind::potts;
  s.q = 3;
  auto engine = make_cpu_engine(s);
  const auto series = sample(*engine, 500, 16000, 1);
  const int observables = static_cast<int>(engine->observable_names().size());
  std::vector<double> exact;
  for (double beta : betas) exact.push_back(exact_potts({4, 2}, 3, beta, 0.0).energy);
  expect_every_rung(per_rung(series, 4, 4, observables, 0), exact, "Potts q=3 4x2");
}

// The test: a ladder across the 2D transition reproduces Kaufman's exact finite-L
// energy at every rung, and replicas make round trips.
TEST(TemperingKaufman, Ising16LadderEveryRung) {
  std::vector<double> betas;
  for (int k = 0; k < 8; ++k) betas.push_back(0.30 + 0.035 * k);
  EngineSettings s = ising_ladder({16, 16}, beta_ladder(betas), 1, UpdateAlgorithm::metropolis);
  auto engine = make_cpu_engine(s);
  const auto series = sample(*engine, 2000, 24000, 1);
  std::vector<double> exact;
  for (double beta : betas) exact.push_back(kaufman_ising(16, 16, beta).energy);
  expect_every_rung(per_rung(series, 8, 1, 2, 0), exact, "Ising 16^2 Kaufman");
  const TemperingState t = engine->tempering();
  EXPECT_GT(t.round_trip_sweeps.size(), 5u);
}

TEST(Tempering, Phi4KappaLadderExchanges) {
  EngineSettings s = phi4_settings({6, 6}, 0.0, 0.5, 0.0, {UpdateAlgorithm::metropolis});
  s.tempering.kappa = {0.15, 0.2, 0.25, 0.3};
  s.kappa = 0.15;
  s.replicas = 4;
  auto engine = make_cpu_engine(s);
  const auto series = sample(*engine, 200, 400, 1);
  const TemperingState t = engine->tempering();
  for (size_t k = 0; k < t.attempts.size(); ++k) EXPECT_GT(t.accepts[k], 0) << "pair " << k;
  // Rung order is kappa order: the link average grows with kappa.
  const int observables = static_cast<int>(engine->observable_names().size());
  double previous = -1e9;
  for (int k = 0; k < 4; ++k) {
    const auto& links = series[static_cast<size_t>(k * observables + 4)];
    const double mean = std::accumulate(links.begin(), links.end(), 0.0) / links.size();
    EXPECT_GT(mean, previous) << "rung " << k;
    previous = mean;
  }
}

}  // namespace
}  // namespace lattica::test

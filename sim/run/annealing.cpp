#include "sim/run/annealing.hpp"

#include <chrono>
#include <cmath>
#include <string>

namespace lattica {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// Kinds of population moments per observable: x, |x|, x^2.
constexpr int kMoments = 3;

/// Mean and standard deviation over the population of x, |x| and x^2 of every observable, from
/// one measurement's values[r * observables + o] (two passes, in replica order).
void population_moments(const std::vector<double>& values, int replicas, AnnealingStep& row) {
  const size_t observables = values.size() / static_cast<size_t>(replicas);
  const auto moment = [&](int r, size_t o, int j) {
    const double x = values[static_cast<size_t>(r) * observables + o];
    return j == 0 ? x : j == 1 ? std::fabs(x) : x * x;
  };
  row.mean.assign(observables * kMoments, 0.0);
  row.spread.assign(observables * kMoments, 0.0);
  for (size_t o = 0; o < observables; ++o) {
    for (int j = 0; j < kMoments; ++j) {
      double sum = 0.0, squares = 0.0;
      for (int r = 0; r < replicas; ++r) sum += moment(r, o, j);
      const double mean = sum / replicas;
      for (int r = 0; r < replicas; ++r)
        squares += (moment(r, o, j) - mean) * (moment(r, o, j) - mean);
      row.mean[o * kMoments + static_cast<size_t>(j)] = mean;
      row.spread[o * kMoments + static_cast<size_t>(j)] = std::sqrt(squares / replicas);
    }
  }
}

void check_settings(const Engine& engine, const AnnealingSettings& s) {
  if (s.betas.empty()) throw InputError("annealing: the schedule has no inverse temperature");
  if (s.populations < 1 || engine.replicas() % s.populations != 0)
    throw InputError("annealing.populations: run.replicas (" + std::to_string(engine.replicas()) +
                     ") must be a multiple of it (" + std::to_string(s.populations) + ")");
}

}  // namespace

double log_z0_per_site(const EngineSettings& settings) {
  switch (settings.model) {
    case ModelKind::ising:
      return std::log(2.0);
    case ModelKind::potts:
      return std::log(static_cast<double>(settings.q));
    default:
      return 0.0;
  }
}

ResamplingPlan plan_resampling(const std::vector<double>& log_w, int populations, Resampling method,
                               uint64_t seed, uint64_t step) {
  ResamplingPlan plan;
  const int64_t size = static_cast<int64_t>(log_w.size()) / populations;
  plan.source.resize(log_w.size());
  for (int p = 0; p < populations; ++p) {
    const int64_t first = p * size;
    const RelativeWeights weights = relative_weights(log_w.data() + first, size);
    plan.log_mean.push_back(weights.log_mean());
    plan.effective_size.push_back(weights.effective_size());
    int32_t* source = plan.source.data() + first;
    resampling_sources(method, weights, seed, step, static_cast<uint32_t>(p), source);
    for (int64_t i = 0; i < size; ++i) source[i] += static_cast<int32_t>(first);
  }
  return plan;
}

void family_statistics(const std::vector<int32_t>& family, int64_t& families, double& rho_t) {
  std::vector<int64_t> members(family.size(), 0);
  for (int32_t f : family) ++members[static_cast<size_t>(f)];
  families = 0;
  double squares = 0.0;
  for (int64_t n : members) {
    families += n > 0;
    squares += static_cast<double>(n) * static_cast<double>(n);
  }
  // Populations of equal size R / P (families never cross them): the mean over populations of
  // (R / P) sum_i (n_i / (R / P))^2 is sum_i n_i^2 / R.
  rho_t = squares / static_cast<double>(family.size());
}

void run_population_annealing(Engine& engine, const AnnealingSettings& s,
                              const std::function<void(const AnnealingStep&)>& record) {
  check_settings(engine, s);
  const int replicas = engine.replicas();
  const double volume = static_cast<double>(engine.volume());
  std::vector<double> log_z(static_cast<size_t>(s.populations), volume * s.log_z0_per_site);
  std::vector<int32_t> family(static_cast<size_t>(replicas));
  for (int r = 0; r < replicas; ++r) family[static_cast<size_t>(r)] = r;
  std::vector<double> log_w;
  MeasurementBatch batch;
  engine.initialize();
  engine.set_beta(s.betas.front());
  for (size_t k = 0; k < s.betas.size(); ++k) {
    const Clock::time_point start = Clock::now();
    AnnealingStep row;
    row.step = static_cast<int64_t>(k);
    row.beta = s.betas[k];
    row.effective_population = replicas;
    if (k > 0) {
      engine.log_weight_changes(row.beta, log_w);
      const ResamplingPlan plan = plan_resampling(log_w, s.populations, s.resampling, s.seed, k);
      engine.gather_replicas(plan.source);
      engine.set_beta(row.beta);
      std::vector<int32_t> moved(family.size());
      for (size_t r = 0; r < family.size(); ++r)
        moved[r] = family[static_cast<size_t>(plan.source[r])];
      family = std::move(moved);
      row.effective_population = 0.0;
      for (int p = 0; p < s.populations; ++p) {
        log_z[static_cast<size_t>(p)] += plan.log_mean[static_cast<size_t>(p)];
        row.effective_population += plan.effective_size[static_cast<size_t>(p)];
      }
      engine.synchronize();
      row.resampling_seconds = seconds_since(start);
    }
    // Sweep indices run on through the schedule, so every step draws new random numbers (and
    // the copies of one replica part at once: replicas have their own streams).
    const auto first = static_cast<uint64_t>(k) * static_cast<uint64_t>(s.sweeps);
    engine.sweep_and_measure(first, static_cast<uint64_t>(s.sweeps));
    engine.collect(batch);
    row.sweeps_done = static_cast<int64_t>(k + 1) * s.sweeps;
    row.log_z = log_z;
    double mean_log_z = 0.0;
    for (double l : log_z) mean_log_z += l / s.populations;
    row.beta_free_energy = -mean_log_z / volume;
    population_moments(batch.values, replicas, row);
    family_statistics(family, row.families, row.rho_t);
    row.values = &batch.values;
    row.family = &family;
    row.step_seconds = seconds_since(start);
    record(row);
  }
}

}  // namespace lattica

#pragma once
// Population annealing (issue 21): a population of replicas (the engine's run.replicas,
// updated together in the same launches) is carried along a schedule of inverse temperatures.
// Before each step the replicas are resampled by their Boltzmann weight ratios
// w_r = exp(-(beta_k - beta_{k-1}) E_r), which also estimates the free energy,
// ln Z_k - ln Z_{k-1} = ln mean_r w_r; then every replica does the step's sweeps and is measured.
// The population may be split into independent populations (resampled separately), whose
// free energies give an error bar from one run. Everything here runs on the host and is the
// same for every backend; the engine computes the weights' energies and copies replicas.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kernels/ensemble/population_resampling.hpp"
#include "sim/engine/engine.hpp"

namespace lattica {

/// What population annealing is asked to do (the [annealing] section).
struct AnnealingSettings {
  std::vector<double> betas;  ///< the schedule, betas[0] = 0, strictly increasing
  int64_t sweeps = 10;        ///< sweeps at each inverse temperature, after its resampling
  int populations = 1;        ///< independent populations the replicas are split into
  Resampling resampling = Resampling::systematic;
  uint64_t seed = 0;
  /// ln Z at betas[0] per site: ln 2 (Ising), ln q (Potts), 0 (O(n), normalised measure).
  double log_z0_per_site = 0.0;
};

/// One step of the schedule, after its resampling, sweeps and measurement.
struct AnnealingStep {
  int64_t step = 0;
  double beta = 0.0;
  int64_t sweeps_done = 0;        ///< sweeps of every replica so far
  std::vector<double> log_z;      ///< [population]: its estimate of ln Z at beta
  double beta_free_energy = 0.0;  ///< -(mean over populations of ln Z) / V
  /// Over every replica, per observable o (Engine::observable_names()) and power j of x, |x|,
  /// x^2: the population's mean and standard deviation, [o * 3 + j].
  std::vector<double> mean, spread;
  int64_t families = 0;  ///< distinct ancestors at step 0 still present
  /// rho_t = R sum_i nu_i^2 (nu_i: family i's fraction of its population), averaged over the
  /// populations; 1 when every replica is its own family, R when one family holds all.
  double rho_t = 0.0;
  /// sum over populations of (sum w)^2 / sum w^2 of this step's weights (R at step 0).
  double effective_population = 0.0;
  double resampling_seconds = 0.0;  ///< weights, plan and gather (the host's share included)
  double step_seconds = 0.0;        ///< the whole step
  /// Per replica (for output that asks for it): the measurement, [r * observables + o], and
  /// the family (the replica's ancestor at step 0).
  const std::vector<double>* values = nullptr;
  const std::vector<int32_t>* family = nullptr;
};

/// ln Z at beta = 0 per site for an engine's model: ln 2, ln q, or 0 (continuous models,
/// whose single-site measure is normalised).
double log_z0_per_site(const EngineSettings& settings);

/// The sources of every replica for the resampling before step `step`: each population's
/// plan (resampling_sources) with its indices offset to the whole population. Also returns,
/// per population, its RelativeWeights' ln mean and effective size. Precondition:
/// log_w.size() is a multiple of `populations`.
struct ResamplingPlan {
  std::vector<int32_t> source;
  std::vector<double> log_mean;        ///< [population]
  std::vector<double> effective_size;  ///< [population]
};
ResamplingPlan plan_resampling(const std::vector<double>& log_w, int populations, Resampling method,
                               uint64_t seed, uint64_t step);

/// Families present and rho_t (AnnealingStep) of `family` ([replica]: ancestor in [0, R)), for
/// populations of equal size.
void family_statistics(const std::vector<int32_t>& family, int64_t& families, double& rho_t);

/// Runs the schedule on `engine` from its initial state (Engine::initialize()), calling
/// `record` after every step. Throws InputError when the engine cannot anneal (its model has
/// no beta, it is tempered or decomposed) or the replicas are not whole populations.
void run_population_annealing(Engine& engine, const AnnealingSettings& settings,
                              const std::function<void(const AnnealingStep&)>& record);

}  // namespace lattica

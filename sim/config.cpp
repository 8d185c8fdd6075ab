// The public types' own functions; parsing and validation live in sim/config/.

#include "sim/config.hpp"

#include "sim/config/schema.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace lattica {

namespace {

std::string lines(const std::vector<std::string>& messages) {
  std::string out;
  for (size_t i = 0; i < messages.size(); ++i) out += (i ? "\n" : "") + messages[i];
  return out;
}

}  // namespace

ConfigError::ConfigError(std::vector<std::string> messages)
    : std::runtime_error(lines(messages)), messages_(std::move(messages)) {}

int64_t Config::volume() const {
  int64_t v = 1;
  for (int64_t l : dims) v *= l;
  return v;
}

MucaEnergyBins Config::muca_energy_bins() const {
  MucaEnergyBins b;
  if (!muca_continuous()) return b;
  const double v = static_cast<double>(volume()), d = static_cast<double>(dims.size());
  const double low = muca_window.size() == 2 ? muca_window[0] : -d;
  const double high = muca_window.size() == 2 ? muca_window[1] : d;
  b.low = low * v;
  b.count = static_cast<int32_t>(muca_bins);
  b.width = (high - low) * v / static_cast<double>(muca_bins);
  return b;
}

int Config::muca_spin_bytes() const {
  if (!muca_continuous()) return 1;
  const int value = precision == "float" ? 4 : 8;
  return model_kind == "on" ? n * value : value;
}

std::array<int64_t, 2> Config::muca_window_bins() const {
  if (muca_continuous()) return {1, muca_bins};
  const int64_t bonds = static_cast<int64_t>(dims.size()) * volume();
  if (muca_window.size() != 2) return {0, bonds};
  // Bin k has E = -k (Potts) or dV - 2k (Ising): k = (offset - E) / slope; the tolerance keeps
  // an edge given exactly (e.g. -1.0 x V) inside.
  const bool ising = model_kind == "ising";
  const long double slope = ising ? 2 : 1, offset = ising ? bonds : 0;
  const long double v = static_cast<long double>(volume());
  const long double lo = (offset - muca_window[1] * v) / slope;
  const long double hi = (offset - muca_window[0] * v) / slope;
  const auto first = static_cast<int64_t>(std::ceil(lo - 1e-9L));
  const auto last = static_cast<int64_t>(std::floor(hi + 1e-9L));
  return {std::max<int64_t>(first, 0), std::min(last, bonds)};
}

std::vector<double> Config::annealing_schedule() const {
  if (annealing_steps == 0 || annealing_beta.size() != 2) return annealing_beta;
  std::vector<double> betas;
  const double first = annealing_beta[0], last = annealing_beta[1];
  for (int64_t k = 0; k <= annealing_steps; ++k) {
    // The ends exactly; between them first + k (last - first) / steps.
    betas.push_back(k == annealing_steps ? last
                                         : first + static_cast<double>(k) * (last - first) /
                                                       static_cast<double>(annealing_steps));
  }
  return betas;
}

int Config::rungs() const {
  size_t n = 0;
  for (const auto* ladder : {&tempering_beta, &tempering_kappa, &tempering_lambda, &tempering_h})
    n = std::max(n, ladder->size());
  return static_cast<int>(n);
}

EngineSettings Config::engine_settings() const {
  EngineSettings s;
  s.dims = dims;
  s.beta = beta;
  s.kappa = kappa;
  s.lambda = lambda;
  s.field = field;
  s.sequence.clear();
  for (const std::string& a : sequence) s.sequence.push_back(config::update_algorithm_named(a));
  s.model = model_kind == "potts"  ? ModelKind::potts
            : model_kind == "on"   ? ModelKind::on
            : model_kind == "phi4" ? ModelKind::phi4
                                   : ModelKind::ising;
  s.q = q;
  s.n = n;
  s.precision = precision == "float" ? Precision::float32 : Precision::float64;
  s.hits = hits;
  s.wolff_clusters = wolff_clusters;
  s.step = step;
  s.tune_step = tune_step;
  s.target_acceptance = target_acceptance;
  s.langevin_step = langevin_step;
  s.multispin = multispin;
  s.snapshots = snapshot_every > 0;
  s.snapshot_bits = snapshot_packing == "bits";
  s.seed = seed;
  s.start = start == "cold" ? InitialState::cold : InitialState::hot;
  s.cpu_threads = threads;
  s.cuda_device = device;
  s.parallel_grid = parallel_grid;
  s.tempering.beta = tempering_beta;
  s.tempering.kappa = tempering_kappa;
  s.tempering.lambda = tempering_lambda;
  s.tempering.field = tempering_h;
  s.tempering.exchange_every = exchange_every;
  s.tempering.feedback = static_cast<int>(tempering_feedback);
  s.tempering.thermalization = thermalization;
  // A tempered run's replicas: run.replicas ladders of one slot per rung (validation keeps the
  // product within kMaxReplicas; clamped here for configurations not yet validated).
  s.replicas = static_cast<int>(std::min<int64_t>(
      int64_t(replicas) * std::max(1, s.tempering.rungs()), std::numeric_limits<int>::max()));
  // Measurements wait in the engine (on the GPU) until a batch is collected.
  s.measurement_capacity = std::min<int64_t>(flush_every, 4096);
  s.structure_factor_every = structure_factor ? structure_factor_every : 0;
  s.timeslice_every = timeslice ? timeslice_every : 0;
  s.timeslice_momenta_per_axis = timeslice_momenta;
  return s;
}

}  // namespace lattica

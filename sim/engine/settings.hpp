#pragma once
// What an engine is asked to sample: the settings the driver derives from the validated
// configuration, in plain types (no configuration or output libraries).

#include <algorithm>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "kernels/lattice/packable.hpp"
#include "kernels/models/lattice_model.hpp"
#include "sim/communicator.hpp"

namespace lattica {

/// Bad input found after parsing (e.g. a lattice too large for the chosen device): exit 2.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class InitialState { cold, hot };
enum class ModelKind { ising, potts, on, phi4 };
enum class Precision { float32, float64 };  ///< of a continuous model's field

/// Parallel tempering (issue 21): a ladder of rungs, each with its own couplings. A tempered
/// engine has rungs x ladders replicas; replica slot l * rungs + k starts at rung k of ladder l,
/// and exchanges permute the couplings among a ladder's slots (the configurations stay put).
struct TemperingSettings {
  /// The tempered couplings, each empty (the model's value for every rung) or one per rung.
  std::vector<double> beta, kappa, lambda, field;
  int64_t exchange_every = 1;  ///< sweeps between exchange rounds (alternating even, odd pairs)
  /// Feedback-optimised ladder: N > 0 feedback steps of the one tempered ladder, before sweeps
  /// i * thermalization / (N + 1), i = 1 .. N (the last part thermalizes the frozen ladder).
  int feedback = 0;
  int64_t thermalization = 0;  ///< sweeps of the run's thermalization (for the feedback)

  /// Rungs of a ladder; 0: no tempering.
  int rungs() const {
    size_t n = 0;
    for (const auto* list : {&beta, &kappa, &lambda, &field}) n = std::max(n, list->size());
    return static_cast<int>(n);
  }

  /// Sweeps between feedback steps: thermalization / (feedback + 1).
  int64_t feedback_interval() const { return thermalization / (feedback + 1); }

  /// Whether a feedback step of the ladder comes before sweep `sweep`.
  bool feedback_due(uint64_t sweep) const {
    const int64_t every = feedback > 0 ? feedback_interval() : 0;
    return every > 0 && sweep > 0 && sweep % static_cast<uint64_t>(every) == 0 &&
           sweep / static_cast<uint64_t>(every) <= static_cast<uint64_t>(feedback);
  }

  /// The tempered ladder the feedback moves: the first given (validation allows only one).
  const std::vector<double>& tuned_ladder() const {
    for (const auto* list : {&beta, &kappa, &lambda, &field})
      if (!list->empty()) return *list;
    throw std::logic_error("tempering: no ladder to tune");
  }
  std::vector<double>& tuned_ladder() {
    return const_cast<std::vector<double>&>(std::as_const(*this).tuned_ladder());
  }
};

/// What an engine needs to know; derived from the validated configuration.
struct EngineSettings {
  ModelKind model = ModelKind::ising;
  int q = 2;  ///< Potts states
  int n = 3;  ///< O(n) components
  Precision precision = Precision::float64;
  std::vector<int64_t> dims;
  double beta = 0.0;    ///< Ising, Potts, O(n)
  double kappa = 0.0;   ///< phi^4 hopping parameter
  double lambda = 0.0;  ///< phi^4 quartic coupling
  double field = 0.0;
  /// One sweep: these passes over the lattice, in order (each: colour 0, then colour 1).
  std::vector<UpdateAlgorithm> sequence{UpdateAlgorithm::metropolis};
  int wolff_clusters = 1;          ///< single clusters per "wolff" pass
  int hits = 1;                    ///< Metropolis proposals per site and pass (continuous models)
  double step = 1.0;               ///< initial Metropolis step size (continuous models)
  bool tune_step = true;           ///< tune the step during thermalization, then freeze it
  double target_acceptance = 0.5;  ///< of Metropolis (and MALA) proposals, when tuning
  double langevin_step = 0.1;      ///< Fourier-accelerated Langevin time step (phi^4)
  uint64_t seed = 0;
  InitialState start = InitialState::hot;
  int replicas = 1;             ///< chains updated together: independent ones, or rungs x ladders
  TemperingSettings tempering;  ///< rungs() == 0: every replica has the couplings above
  int64_t measurement_capacity = 1024;  ///< measurements queued before collect() must run
  /// Structure factor of the order-parameter field on every k-th measurement; 0: off.
  int64_t structure_factor_every = 0;
  /// Momentum-projected time-slice correlators on every k-th measurement; 0: off.
  int64_t timeslice_every = 0;
  int timeslice_momenta_per_axis = 1;  ///< N: p = 0 and n e_a, n = 1 .. N, per spatial axis
  /// Ising: store 32 spins per word and update them together where the lattice allows
  /// (uses_packed_ising); the chain is the same either way.
  bool multispin = true;
  /// The run takes snapshots between sweeps (output.snapshot_every > 0): the packed Ising
  /// engine then keeps a lexicographic copy to stage them, so that copying overlaps sweeps.
  bool snapshots = false;
  /// Ising: snapshots (start_snapshot) are bit-packed, IsingModel::bit_packed_snapshot_format.
  bool snapshot_bits = false;
  /// The ranks of a decomposed run (issue 8): with more than one, each engine samples its box
  /// of the lattice (parallel_grid boxes per axis; empty: Decomposition chooses), and
  /// measurements, histograms and configurations are those of the whole lattice. Null: alone.
  std::shared_ptr<Communicator> communicator;
  std::vector<int> parallel_grid;
  int cpu_threads = 0;  ///< 0: OpenMP default
  int cuda_device = 0;
  int cuda_block_size = 256;  ///< threads per block; the chain does not depend on it
};

/// The settings of rung `rung` of a tempered run: its couplings in place of the model's.
inline EngineSettings at_rung(const EngineSettings& s, int rung) {
  EngineSettings r = s;
  const auto take = [rung](const std::vector<double>& ladder, double& value) {
    if (!ladder.empty()) value = ladder[static_cast<size_t>(rung)];
  };
  take(s.tempering.beta, r.beta);
  take(s.tempering.kappa, r.kappa);
  take(s.tempering.lambda, r.lambda);
  take(s.tempering.field, r.field);
  return r;
}

/// Sites of a lattice of these extents.
inline int64_t volume_of(const std::vector<int64_t>& dims) {
  int64_t v = 1;
  for (int64_t l : dims) v *= l;
  return v;
}

/// Bytes of one site's variable for a model (for memory estimates before allocating).
inline size_t site_bytes(const EngineSettings& s) {
  const size_t real = s.precision == Precision::float32 ? 4 : 8;
  switch (s.model) {
    case ModelKind::on:
      return real * static_cast<size_t>(s.n);
    case ModelKind::phi4:
      return real;
    default:
      return 1;
  }
}

/// Whether an engine of these settings keeps Ising spins multi-spin coded, 1 bit each
/// (kernels/models/ising_packed.hpp): Ising, multispin on, not tempered, the last extent a
/// multiple of 64.
inline bool uses_packed_ising(const EngineSettings& s) {
  // Tempered runs keep bytes: their replicas' couplings differ, the packed passes share one.
  return s.model == ModelKind::ising && s.multispin && s.tempering.rungs() == 0 &&
         !s.dims.empty() && s.dims.size() <= 4 &&
         packable_lattice(s.dims.data(), static_cast<int>(s.dims.size()));
}

}  // namespace lattica

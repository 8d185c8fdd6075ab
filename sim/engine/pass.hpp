#pragma once
// A pass: one kind of move of a sweep (issue 18). A sweep runs the entries of
// update.sequence in order; each entry is run by the pass that handles its algorithm (one
// pass object serves every entry of its kind, so the entries share its state, e.g. a tuned
// step). A new family of moves (cluster updates, replica exchange) is a new pass and its
// kernels, registered in sim/engine/pass_registry.hpp; the engine does not change.
//
// Random numbers: an entry draws from the streams of (sweep, its index in the sequence), so a
// chain does not depend on which pass object runs it or how sweeps are cut into calls.

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/lattice/checkerboard.hpp"
#include "kernels/models/lattice_model.hpp"
#include "sim/engine/decomposed_box.hpp"
#include "sim/engine/engine.hpp"
#include "sim/engine/tempering.hpp"

namespace lattica {

/// What a pass works on; the engine owns all of it and outlives its passes.
template <class Exec, int D, class Model, class Storage>
struct PassContext {
  const Exec& exec;
  const Checkerboard<D>& lattice;  ///< the whole lattice, or this rank's box with its ghosts
  Storage& storage;
  DecomposedBox<Exec, D>* box;  ///< null when the lattice is not decomposed
  const EngineSettings& settings;
  typename Model::Params& params;     ///< shared by every pass; a pass may tune its step
  Tempering<Exec, Model>& tempering;  ///< parallel tempering's per-replica couplings, or off

  /// What a pass's functors take: `params` for every replica, or each its own when tempered.
  ReplicaParams<typename Model::Params> replica_params() const {
    return {params, tempering.table(), tempering.rung_of_slot()};
  }
};

/// An observable a pass estimates itself (a cluster pass's improved estimator).
struct Estimate {
  std::string name;
  std::string description;
};

template <class Exec, int D, class Model, class Storage>
class Pass {
 public:
  using Sums = typename Model::Sums;
  virtual ~Pass() = default;

  /// Whether this pass runs entries of `algorithm`.
  virtual bool handles(UpdateAlgorithm algorithm) const = 0;
  /// Queues entry `index` of the sequence, of `algorithm`, for sweep `sweep`. `counting`: a
  /// thermalization sweep, whose acceptance the pass may count (without touching random
  /// numbers). `sums`: non-null only where fuses_measurement(), for the sweep's last entry:
  /// the pass also adds each replica's sums after it to sums[r] (zero).
  virtual void run(UpdateAlgorithm algorithm, uint32_t index, uint64_t sweep, bool counting,
                   Sums* sums) = 0;
  /// Whether run() can take the measurement that follows its entry.
  virtual bool fuses_measurement() const { return false; }

  /// Around a block of `sweeps` thermalization sweeps: the pass measures its acceptance and
  /// may tune its step afterwards.
  virtual void begin_thermalization(uint64_t /*sweeps*/) {}
  virtual void end_thermalization(uint64_t /*sweeps*/) {}
  /// Its part of the step-tuning report, which checkpoints carry.
  virtual void report(StepTuning& /*tuning*/) const {}
  /// The observables it estimates, appended to the model's at every measurement; at most one
  /// pass of a sweep has them.
  virtual std::vector<Estimate> estimates() const { return {}; }
  /// Copies its latest estimates to a measurement's slot on the backend: per replica, per
  /// estimate, a numerator and a denominator (exact integers, each rank's part).
  virtual void record_estimates(long long* /*slot*/) {}
  /// Its part of a checkpoint, and continuing from one.
  virtual void save(EngineState& /*state*/) const {}
  virtual void restore(const EngineState& /*state*/) {}
};

}  // namespace lattica

#pragma once
// Runs the sweeps of an engine: each sweep the entries of update.sequence in order, each by
// the pass that handles it (sim/engine/pass_registry.hpp), and forwards thermalization,
// tuning and checkpoint hooks to every pass.

#include <memory>
#include <string>
#include <vector>

#include "kernels/rng/philox.hpp"
#include "sim/engine/pass_registry.hpp"

namespace lattica {

template <class Exec, int D, class Model, class Storage>
class Sweeper {
  using PassType = Pass<Exec, D, Model, Storage>;

 public:
  explicit Sweeper(const PassContext<Exec, D, Model, Storage>& context) : context_(context) {
    const std::vector<UpdateAlgorithm>& sequence = context.settings.sequence;
    if (sequence.empty() || sequence.size() > kMaxUpdatePasses) {
      throw InputError("update.sequence: 1 to " + std::to_string(kMaxUpdatePasses) +
                       " passes per sweep");
    }
    for (UpdateAlgorithm algorithm : sequence)
      entries_.push_back({algorithm, pass_for(algorithm, context)});
  }

  /// Sweep `sweep`: every entry in order. `counting`: a thermalization sweep. `sums`: where the
  /// last entry also queues the following measurement (only when fuses_measurement()).
  void sweep(uint64_t sweep, bool counting, typename Model::Sums* sums = nullptr) {
    // Parallel tempering's exchange round, when one is due, comes first: a measurement after
    // sweep - 1 saw the couplings before it.
    context_.tempering.before_sweep(sweep, context_.storage, context_.params,
                                    context_.box ? &context_.box->communicator() : nullptr);
    // The next round's sums from this sweep's last pass, when it can leave them and no
    // measurement takes that place.
    if (!sums && fuses_measurement())
      sums = context_.tempering.sums_for_round_after(sweep, context_.box != nullptr);
    for (size_t i = 0; i < entries_.size(); ++i) {
      const bool last = i + 1 == entries_.size();
      entries_[i].pass->run(entries_[i].algorithm, static_cast<uint32_t>(i), sweep, counting,
                            last ? sums : nullptr);
    }
  }

  /// Whether the last entry's pass can take the measurement after a sweep.
  bool fuses_measurement() const { return entries_.back().pass->fuses_measurement(); }

  /// Thermalization sweeps first .. first+count-1: the passes count their acceptance and tune.
  void thermalize(uint64_t first, uint64_t count) {
    for (auto& pass : passes_) pass->begin_thermalization(count);
    for (uint64_t s = first; s < first + count; ++s) sweep(s, true);
    for (auto& pass : passes_) pass->end_thermalization(count);
  }

  /// The observables a pass estimates itself (at most one pass has them), and recording them.
  std::vector<Estimate> estimates() const {
    for (const auto& pass : passes_) {
      if (!pass->estimates().empty()) return pass->estimates();
    }
    return {};
  }
  void record_estimates(long long* slot) {
    if (!slot) return;
    for (const auto& pass : passes_) {
      if (!pass->estimates().empty()) return pass->record_estimates(slot);
    }
  }

  void report(StepTuning& tuning) const {
    for (const auto& pass : passes_) pass->report(tuning);
  }
  void save(EngineState& state) const {
    for (const auto& pass : passes_) pass->save(state);
  }
  void restore(const EngineState& state) {
    for (auto& pass : passes_) pass->restore(state);
  }

 private:
  struct Entry {
    UpdateAlgorithm algorithm;
    PassType* pass;
  };

  /// The pass that runs `algorithm`: the first that handles it, or a new one.
  PassType* pass_for(UpdateAlgorithm algorithm,
                     const PassContext<Exec, D, Model, Storage>& context) {
    for (auto& pass : passes_) {
      if (pass->handles(algorithm)) return pass.get();
    }
    passes_.push_back(make_pass(algorithm, context));
    return passes_.back().get();
  }

  PassContext<Exec, D, Model, Storage> context_;
  std::vector<std::unique_ptr<PassType>> passes_;  ///< in order of first use
  std::vector<Entry> entries_;                     ///< update.sequence
};

}  // namespace lattica

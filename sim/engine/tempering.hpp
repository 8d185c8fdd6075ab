#pragma once
// Parallel tempering as a part of an engine: each rung's Params (built by the model's own
// model_params() from the rung's couplings, so the per-site physics has one source of truth),
// the per-slot table the passes read (kernels/models/replica_params.hpp), and the exchange
// rounds between sweeps (sim/engine/tempering_ladder.hpp). Exchange decisions are taken on the
// host from each configuration's sums (exact integers for discrete models), summed over the
// ranks of a decomposed run, so every backend and rank count takes the same ones.

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "sim/communicator.hpp"
#include "sim/engine/model_params.hpp"
#include "sim/engine/tempering_ladder.hpp"

namespace lattica {

/// Parallel tempering's part of one engine; off (no table, no exchanges) when the settings
/// have no ladder.
template <class Exec, class Model>
class Tempering {
 public:
  using Params = typename Model::Params;
  using Sums = typename Model::Sums;

  /// Every rung's Params for lattice dimension d, and the slots at their starting rungs.
  /// Throws InputError when the replicas are not whole ladders. `settings` must outlive it.
  Tempering(const Exec& exec, const EngineSettings& settings, int d)
      : exec_(exec),
        settings_(settings),
        d_(d),
        volume_(static_cast<double>(volume_of(settings.dims))) {
    const int rungs = settings.tempering.rungs();
    if (rungs == 0) return;
    if (settings.replicas % rungs != 0)
      throw InputError("tempering: the replicas must be whole ladders of the rungs");
    for (int k = 0; k < rungs; ++k)
      rung_params_.push_back(model_params(Model{}, at_rung(settings, k), d));
    state_ = initial_tempering(rungs, settings.replicas / rungs);
    if (settings.tempering.feedback > 0) state_.ladder = settings.tempering.tuned_ladder();
    table_ = exec.template allocate<Params>(settings.replicas);
    host_table_.resize(static_cast<size_t>(settings.replicas));
    sums_ = exec.template allocate<Sums>(settings.replicas);
    host_sums_.resize(static_cast<size_t>(settings.replicas));
  }

  /// Whether the run is tempered, and its rungs per ladder.
  bool on() const { return state_.rungs > 0; }
  int rungs() const { return state_.rungs; }
  /// The per-slot Params the passes read, or null when every replica shares one set.
  const Params* table() const { return on() ? table_.data() : nullptr; }
  /// Rung `rung`'s Params (without the tuned step), and the permutation with its statistics.
  const Params& rung_params(int rung) const { return rung_params_[static_cast<size_t>(rung)]; }
  const TemperingState& state() const { return state_; }

  /// Rewrites the per-slot table from the permutation; `shared` gives what every rung has in
  /// common and a pass may tune (the Metropolis step).
  void refresh(const Params& shared) {
    if (!on()) return;
    for (size_t s = 0; s < host_table_.size(); ++s) {
      host_table_[s] = rung_params_[static_cast<size_t>(state_.rung_of_slot[s])];
      if constexpr (Model::kTunableStep) host_table_[s].step = shared.step;
    }
    exec_.copy_to_device(host_table_.data(), table_);
  }

  /// The exchange round due before sweep `sweep`, if one is: each slot's sums (`storage`'s,
  /// summed over `ranks` when decomposed), the round on the host, and the new table.
  /// A feedback step of the ladder comes first when one is due (tempering.feedback): from the
  /// visit counts, which every backend and rank has alike, so all move the ladder alike.
  template <class Storage>
  void before_sweep(uint64_t sweep, const Storage& storage, const Params& shared,
                    Communicator* ranks) {
    if (!on()) return;
    const bool feedback = settings_.tempering.feedback_due(sweep);
    if (feedback) {
      feedback_step(state_);
      use_ladder(state_.ladder);
    }
    if (!exchange_due(sweep, settings_.tempering.exchange_every)) {
      if (feedback) refresh(shared);
      return;
    }
    storage.sums_into(shared, sums_.data());
    exec_.copy_to_host(sums_, host_sums_.data());
    if (ranks) sum_over_ranks(*ranks, host_sums_.data(), static_cast<int64_t>(host_sums_.size()));
    exchange_round(state_, settings_.seed, sweep, settings_.tempering.exchange_every,
                   [&](int slot, int rung) { return log_weight(rung, host_sums_[slot]); });
    refresh(shared);
  }

  /// ln of the Boltzmann weight of a configuration with sums `sums` at rung `rung`.
  double log_weight(int rung, const Sums& sums) const {
    return Model::log_weight(rung_params(rung), sums, volume_);
  }

  /// Continues from a checkpoint's state. Precondition: restore(state) of a run of the same
  /// ladder (checked).
  void restore(const TemperingState& state, const Params& shared) {
    if (!on()) return;
    check_tempering_state(state, state_.rungs, state_.rung_of_slot.size());
    if (state.ladder.empty() != state_.ladder.empty())
      throw std::invalid_argument("restore: the checkpoint's ladder feedback does not match");
    state_ = state;
    if (!state_.ladder.empty()) use_ladder(state_.ladder);
    refresh(shared);
  }

 private:
  /// Rebuilds every rung's Params with `ladder` as the tempered coupling (the table follows at
  /// the next refresh()).
  void use_ladder(const std::vector<double>& ladder) {
    EngineSettings tuned = settings_;
    tuned.tempering.tuned_ladder() = ladder;
    for (int k = 0; k < state_.rungs; ++k)
      rung_params_[static_cast<size_t>(k)] = model_params(Model{}, at_rung(tuned, k), d_);
  }

  const Exec& exec_;
  const EngineSettings& settings_;
  int d_;
  double volume_;
  std::vector<Params> rung_params_;
  TemperingState state_;
  typename Exec::template Buffer<Params> table_;  ///< [slot], on the backend
  std::vector<Params> host_table_;
  typename Exec::template Buffer<Sums> sums_;  ///< [slot], for the exchange round
  std::vector<Sums> host_sums_;
};

}  // namespace lattica

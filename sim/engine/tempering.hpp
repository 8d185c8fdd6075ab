#pragma once
// Parallel tempering as a part of an engine: each rung's Params (built by the model's own
// model_params() from the rung's couplings, so the per-site physics has one source of truth),
// the per-slot table the passes read (kernels/models/replica_params.hpp), and the exchange
// rounds between sweeps. Exchange decisions come from each configuration's sums (exact integers
// for discrete models) and exchange_accepted, which gives the same bits on host and GPU, so
// every backend and rank count takes the same ones:
//   - one process: on the backend (ExchangePairs, kernels/ensemble/replica_exchange.hpp, a
//     thread per pair with both permutations at hand), so a GPU never waits for the host
//     between sweeps; the passes read each slot's couplings through its rung there
//     (kernels/models/replica_params.hpp), so no Params move. The sums come from the last pass
//     of the sweep before the round where it can leave them (sums_for_round_after), else from
//     a pass over the configurations. The rounds' permutations go to a log on the backend; their
//     statistics (acceptances, round trips, directions; sim/engine/tempering_ladder.hpp) are
//     settled on the host from it when something reads them (state(), a feedback step, a full log);
//   - decomposed: on the host (exchange_round), from the sums added over the ranks.
// A measurement records the slots' rungs of its moment on the backend (record_rungs).

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "kernels/ensemble/replica_exchange.hpp"
#include "sim/communicator.hpp"
#include "sim/engine/model_params.hpp"
#include "sim/engine/tempering_ladder.hpp"

namespace lattica {

/// Copies the slots' rungs (a measurement's record); functor over slots.
struct CopyRungs {
  const int32_t* from;
  int32_t* to;
  LATTICA_HD_INLINE void operator()(int64_t s) const { to[s] = from[s]; }
};

/// Parallel tempering's part of one engine; off (no table, no exchanges) when the settings
/// have no ladder.
template <class Exec, class Model>
class Tempering {
 public:
  using Params = typename Model::Params;
  using Sums = typename Model::Sums;

  /// Every rung's Params for lattice dimension d, and the slots at their starting rungs (on the
  /// backend from the first refresh()). Throws InputError when the replicas are not whole
  /// ladders. `settings` must outlive it.
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
    sums_ = exec.template allocate<Sums>(settings.replicas);
    host_sums_.resize(static_cast<size_t>(settings.replicas));
    rung_table_ = exec.template allocate<Params>(rungs);
    rung_of_slot_ = exec.template allocate<int32_t>(settings.replicas);
    slot_of_rung_ = exec.template allocate<int32_t>(settings.replicas);
    logged_rounds_ = std::max<int64_t>(1, std::min<int64_t>(256, (1 << 22) / settings.replicas));
    round_log_ = exec.template allocate<int32_t>(logged_rounds_ * settings.replicas);
    measured_rungs_ =
        exec.template allocate<int32_t>(settings.measurement_capacity * settings.replicas);
  }

  /// Whether the run is tempered, and its rungs per ladder.
  bool on() const { return state_.rungs > 0; }
  int rungs() const { return state_.rungs; }
  /// The rungs' Params the passes read, and each slot's rung there; null when every replica
  /// shares one set.
  const Params* table() const { return on() ? rung_table_.data() : nullptr; }
  const int32_t* rung_of_slot() const { return on() ? rung_of_slot_.data() : nullptr; }
  /// Rung `rung`'s Params (without the tuned step), and the permutation with its statistics.
  const Params& rung_params(int rung) const { return rung_params_[static_cast<size_t>(rung)]; }
  const TemperingState& state() const {
    settle();
    return state_;
  }

  /// Rewrites the rungs' Params on the backend, and the permutation and its inverse there;
  /// `shared` gives what every rung has in common and a pass may tune
  /// (the Metropolis step). Call it after the step or the ladder changed.
  void refresh(const Params& shared) {
    if (!on()) return;
    settle();
    std::vector<Params> rungs = rung_params_;
    for (Params& p : rungs) SharedStep<Model>(shared).apply(p);
    exec_.copy_to_device(rungs.data(), rung_table_);
    std::vector<int32_t> slot_of_rung(state_.rung_of_slot.size());
    for (size_t s = 0; s < slot_of_rung.size(); ++s) {
      const size_t first = s - s % static_cast<size_t>(state_.rungs);
      slot_of_rung[first + static_cast<size_t>(state_.rung_of_slot[s])] = static_cast<int32_t>(s);
    }
    exec_.copy_to_device(state_.rung_of_slot.data(), rung_of_slot_);
    exec_.copy_to_device(slot_of_rung.data(), slot_of_rung_);
  }

  /// The exchange round due before sweep `sweep`, if one is (see the top of this file); with
  /// `ranks`, a decomposed run's, on the host. A feedback step of the ladder comes first when one
  /// is due (tempering.feedback): from the visit counts, which every backend and rank has alike,
  /// so all move the ladder alike.
  template <class Storage>
  void before_sweep(uint64_t sweep, const Storage& storage, const Params& shared,
                    Communicator* ranks) {
    if (!on()) return;
    if (settings_.tempering.feedback_due(sweep)) {
      settle();
      feedback_step(state_);
      use_ladder(state_.ladder);
      refresh(shared);
    }
    const bool fused = fused_round_ == sweep;  // sums_for_round_after(sweep - 1) was used
    fused_round_ = kNoRound;
    if (!exchange_due(sweep, settings_.tempering.exchange_every)) return;
    if (!fused) storage.sums_into(shared, sums_.data());
    if (ranks) {
      exec_.copy_to_host(sums_, host_sums_.data());
      sum_over_ranks(*ranks, host_sums_.data(), static_cast<int64_t>(host_sums_.size()));
      exchange_round(state_, settings_.seed, sweep, settings_.tempering.exchange_every,
                     [&](int slot, int rung) { return log_weight(rung, host_sums_[slot]); });
      refresh(shared);
      return;
    }
    const int64_t slots = static_cast<int64_t>(state_.rung_of_slot.size());
    exec_.for_each(slots,
                   ExchangePairs<Model>{
                       sums_.data(), rung_table_.data(), rung_of_slot_.data(), slot_of_rung_.data(),
                       round_log_.data() + static_cast<int64_t>(logged_sweeps_.size()) * slots,
                       state_.rungs, exchange_parity(sweep, settings_.tempering.exchange_every),
                       volume_, settings_.seed, sweep});
    logged_sweeps_.push_back(sweep);
    if (static_cast<int64_t>(logged_sweeps_.size()) == logged_rounds_) settle();
  }

  /// Where sweep `sweep`'s last pass may leave each slot's sums (Pass::fuses_measurement) for
  /// the exchange round before sweep + 1, so that the round need not sum the configurations
  /// again: this part's buffer, zeroed, when that round is due and taken on the backend (one
  /// process), else null. Call it before the sweep's passes and pass the result to the last.
  Sums* sums_for_round_after(uint64_t sweep, bool decomposed) {
    if (!on() || decomposed || !exchange_due(sweep + 1, settings_.tempering.exchange_every))
      return nullptr;
    exec_.zero(sums_);
    fused_round_ = sweep + 1;
    return sums_.data();
  }
  /// The configuration changed outside the sweeps (a new start, a checkpoint): sums a pass left
  /// for the next round are stale.
  void configuration_changed() { fused_round_ = kNoRound; }

  /// Records the slots' rungs now as those of queued measurement `index` (< the engine's
  /// measurement capacity), on the backend.
  void record_rungs(int64_t index) {
    if (!on()) return;
    const int64_t slots = static_cast<int64_t>(state_.rung_of_slot.size());
    exec_.for_each(slots, CopyRungs{rung_of_slot_.data(), measured_rungs_.data() + index * slots});
  }
  /// The rungs recorded for the first `count` queued measurements, [measurement][slot].
  std::vector<int32_t> recorded_rungs(int64_t count) const {
    std::vector<int32_t> rungs(static_cast<size_t>(count) * state_.rung_of_slot.size());
    if (!rungs.empty())
      exec_.copy_to_host(measured_rungs_, rungs.data(), static_cast<int64_t>(rungs.size()));
    return rungs;
  }

  /// ln of the Boltzmann weight of a configuration with sums `sums` at rung `rung`.
  double log_weight(int rung, const Sums& sums) const {
    return Model::log_weight(rung_params(rung), sums, volume_);
  }

  /// Continues from a checkpoint's state. Precondition: restore(state) of a run of the same
  /// ladder (checked).
  void restore(const TemperingState& state, const Params& shared) {
    configuration_changed();
    if (!on()) return;
    settle();
    check_tempering_state(state, state_.rungs, state_.rung_of_slot.size());
    if (state.ladder.empty() != state_.ladder.empty())
      throw std::invalid_argument("restore: the checkpoint's ladder feedback does not match");
    state_ = state;
    if (!state_.ladder.empty()) use_ladder(state_.ladder);
    refresh(shared);
  }

 private:
  /// The statistics of the logged rounds, from their permutations, into state_ (whose
  /// rung_of_slot then is the backend's).
  void settle() const {
    if (logged_sweeps_.empty()) return;
    const size_t slots = state_.rung_of_slot.size();
    std::vector<int32_t> log(logged_sweeps_.size() * slots);
    exec_.copy_to_host(round_log_, log.data(), static_cast<int64_t>(log.size()));
    for (size_t k = 0; k < logged_sweeps_.size(); ++k)
      account_round(state_, log.data() + k * slots, logged_sweeps_[k],
                    settings_.tempering.exchange_every);
    logged_sweeps_.clear();
  }

  /// Rebuilds every rung's Params with `ladder` as the tempered coupling (the backend's copies
  /// follow at the next refresh()).
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
  mutable TemperingState state_;  ///< settled lazily from the rounds run on the backend
  typename Exec::template Buffer<Sums> sums_;  ///< [slot], for the exchange round
  std::vector<Sums> host_sums_;
  typename Exec::template Buffer<Params> rung_table_;     ///< [rung]: rung_params_ with the step
  typename Exec::template Buffer<int32_t> rung_of_slot_;  ///< [slot], on the backend
  typename Exec::template Buffer<int32_t> slot_of_rung_;  ///< [ladder * rungs + rung]: its inverse
  /// Rounds on the backend whose statistics wait in the log (at most 256, and 16 MiB of it); a
  /// full log is settled.
  int64_t logged_rounds_ = 0;
  typename Exec::template Buffer<int32_t> round_log_;  ///< [round][slot]: rungs after each
  mutable std::vector<uint64_t> logged_sweeps_;        ///< the logged rounds' sweeps
  static constexpr uint64_t kNoRound = ~uint64_t{0};
  /// The sweep whose round finds sums_ filled by the sweep before it (sums_for_round_after).
  uint64_t fused_round_ = kNoRound;
  typename Exec::template Buffer<int32_t> measured_rungs_;  ///< [measurement][slot]
};

}  // namespace lattica

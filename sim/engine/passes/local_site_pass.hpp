#pragma once
// Local site updates of the byte storage: Metropolis, heat bath and over-relaxation entries,
// each a checkerboard pass (colour 0, then colour 1) of the model's update() over every
// replica. For models with a tunable Metropolis step it also counts the acceptance of its
// Metropolis entries during thermalization and rescales the step towards the target.

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "kernels/lattice/row_block.hpp"
#include "kernels/models/lattice_model.hpp"
#include "sim/engine/pass.hpp"
#include "sim/engine/site_storage.hpp"

namespace lattica {

/// Bounds of a tuned step.
constexpr double kMinStep = 1e-6;
constexpr double kMaxStep = 1e3;

/// A tuned step after a block whose acceptance was `acceptance`: larger steps lower the
/// acceptance, so it scales by acceptance / target, at most a factor 2 at a time.
inline double tuned_step(double step, double acceptance, double target) {
  return std::clamp(step * std::clamp(acceptance / target, 0.5, 2.0), kMinStep, kMaxStep);
}

template <class Exec, int D, class Model>
class LocalSitePass final : public Pass<Exec, D, Model, SiteStorage<Exec, D, Model>> {
  using Storage = SiteStorage<Exec, D, Model>;
  using Sums = typename Model::Sums;

 public:
  explicit LocalSitePass(const PassContext<Exec, D, Model, Storage>& context) : c_(context) {
    if constexpr (Model::kTunableStep) {
      for (UpdateAlgorithm a : c_.settings.sequence) {
        metropolis_entries_ += a == UpdateAlgorithm::metropolis;
      }
      if (metropolis_entries_ > 0) {
        accepted_ = c_.exec.template allocate<uint8_t>(sites_per_colour());
        c_.exec.zero(accepted_);  // a box's ghosts are never updated: they count nothing
      }
    }
  }

  bool handles(UpdateAlgorithm algorithm) const override {
    return !is_whole_lattice(algorithm) && !is_cluster(algorithm);
  }

  /// Colour 1's update returns the sums of the configuration it leaves (UpdateColourSums) where
  /// they are exact integers, added over the sites in any order; one process only (a box's
  /// sums cover its interior, which SiteStorage::sums_into walks by blocks of rows).
  bool fuses_measurement() const override { return Model::kExactHistograms && !c_.box; }

  void run(UpdateAlgorithm algorithm, uint32_t index, uint64_t sweep, bool counting,
           Sums* sums) override {
    const bool count =
        counting && metropolis_entries_ > 0 && algorithm == UpdateAlgorithm::metropolis;
    uint8_t* accepted = count ? accepted_.data() : nullptr;
    for (int colour = 0; colour < 2; ++colour) {
      launch_with_couplings(c_.replica_params(), [&](const auto& couplings) {
        with_update_run([&](auto run) {
          update_colour(couplings, run, colour, algorithm, index, sweep, accepted,
                        colour == 1 ? sums : nullptr);
        });
      });
      if (count) {  // this half-pass's accepted moves into the block's next slot (no host wait)
        c_.exec.template reduce_sum_into<long long>(sites_per_colour(), AcceptedAt{accepted},
                                                    slots_.data() + next_slot_++);
      }
    }
  }

  void begin_thermalization(uint64_t sweeps) override {
    if (metropolis_entries_ == 0) return;
    const int64_t slots = static_cast<int64_t>(sweeps) * metropolis_entries_ * 2;
    if (slots_.size() < slots) slots_ = c_.exec.template allocate<long long>(slots);
    next_slot_ = 0;
  }

  void end_thermalization(uint64_t sweeps) override {
    if (metropolis_entries_ == 0) return;
    host_slots_.resize(static_cast<size_t>(next_slot_));
    c_.exec.copy_to_host(slots_, host_slots_.data(), next_slot_);
    long long accepted = 0;
    for (long long a : host_slots_) accepted += a;
    if (c_.box) sum_over_ranks(c_.box->communicator(), &accepted, 1);
    const double proposals = static_cast<double>(sweeps) * metropolis_entries_ * c_.settings.hits *
                             static_cast<double>(volume_of(c_.settings.dims)) *
                             c_.settings.replicas;
    acceptance_ = proposals > 0 ? accepted / proposals : -1.0;
    if constexpr (Model::kTunableStep) {
      if (c_.settings.tune_step && acceptance_ >= 0) {
        c_.params.step = tuned_step(c_.params.step, acceptance_, c_.settings.target_acceptance);
      }
    }
  }

  void report(StepTuning& tuning) const override {
    tuning.applies = metropolis_entries_ > 0;
    tuning.acceptance = acceptance_;
  }

  void restore(const EngineState& state) override {
    if constexpr (Model::kTunableStep) {
      if (state.tuning.applies) c_.params.step = state.tuning.step;
    }
    acceptance_ = state.tuning.acceptance;
  }

 private:
  using Spin = typename Model::Spin;
  int64_t sites_per_colour() const { return c_.settings.replicas * c_.lattice.half_volume; }

  /// f(std::integral_constant<int, run>): the spin's UpdateRun length where the lattice and
  /// the storage allow it (fits_runs), else 1.
  template <class F>
  void with_update_run(const F& f) const {
    constexpr int kRun = UpdateRun<Spin>::length;
    if constexpr (kRun > 1) {
      if (fits_runs<kRun>(c_.lattice, c_.storage.sites()))
        return f(std::integral_constant<int, kRun>{});
    }
    f(std::integral_constant<int, 1>{});
  }

  /// One colour's update in runs of decltype(run)::value sites.
  template <class Couplings, class Run>
  void update_colour(const Couplings& couplings, Run, int colour, UpdateAlgorithm algorithm,
                     uint32_t index, uint64_t sweep, uint8_t* accepted, Sums* sums) {
    constexpr int kRun = Run::value;
    Spin* sites = c_.storage.sites();
    const int64_t runs_per_row = c_.lattice.half_last / kRun;
    const int64_t runs_per_replica = c_.lattice.half_volume / kRun;
    if (c_.box) {
      const int local = c_.box->local_colour(colour);
      const UpdateColour<D, Model, true, Couplings, kRun> update{
          c_.lattice, couplings, sites, accepted, local, algorithm, index, sweep};
      c_.box->update_colour(local, sites, [&](const RowBlock<D>& block) {
        for (int r = 0; r < c_.settings.replicas; ++r) {  // the update's index: (r V/2 + j) / kRun
          over_row_block(block, runs_per_row, r * runs_per_replica, update,
                         [&](int64_t n, const auto& g) { c_.exec.for_each(n, g); });
        }
      });
    } else {
      with_site_index([&](auto index_type) {
        using Index = typename decltype(index_type)::type;
        const UpdateColour<D, Model, false, Couplings, kRun, Index> update{
            c_.lattice, couplings, sites, accepted, colour, algorithm, index, sweep};
        if (!sums) return c_.exec.for_each(c_.settings.replicas * runs_per_replica, update);
        if constexpr (Model::kExactHistograms) {  // fuses_measurement(): colour 1 only
          c_.exec.template accumulate_exact_segments_into<Sums>(
              c_.settings.replicas, runs_per_replica,
              UpdateColourSums<D, Model, Couplings, kRun, Index>{update}, sums);
        }
      });
    }
  }

  /// f(IndexType<uint32_t>) where the backend prefers 32-bit site indices and the lattice fits
  /// them (Checkerboard::fits_32_bits), else f(IndexType<int64_t>): one kernel for each, so
  /// neither carries the other's code or registers.
  template <class T>
  struct IndexType {
    using type = T;
  };
  template <class F>
  void with_site_index(const F& f) const {
    if constexpr (Exec::kNarrowSiteIndices) {
      if (c_.lattice.fits_32_bits()) return f(IndexType<uint32_t>{});
    }
    f(IndexType<int64_t>{});
  }

  PassContext<Exec, D, Model, Storage> c_;
  int metropolis_entries_ = 0;  ///< counted and tuned: models with a tunable step only
  typename Exec::template Buffer<uint8_t> accepted_;  ///< per site, while counting
  typename Exec::template Buffer<long long> slots_;   ///< per counted half-pass of a block
  int64_t next_slot_ = 0;
  std::vector<long long> host_slots_;
  double acceptance_ = -1.0;
};

}  // namespace lattica

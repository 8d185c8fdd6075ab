#pragma once
// Fourier-accelerated Langevin and MALA entries (phi^4): whole-lattice moves through the
// field's Fourier modes (sim/engine/fourier_langevin.hpp), on one process or on the ranks of a
// decomposed lattice (CPU or GPU ranks) through the distributed FFT. During
// thermalization the kernel's shift is re-estimated after every block, and with tuning the MALA
// step is rescaled towards the target acceptance as the Metropolis step is.

#include <algorithm>
#include <cstdint>
#include <string>

#include "sim/engine/fourier_langevin.hpp"
#include "sim/engine/pass.hpp"
#include "sim/engine/passes/local_site_pass.hpp"
#include "sim/engine/site_storage.hpp"

namespace lattica {

template <class Exec, int D, class Model>
class LangevinPass final : public Pass<Exec, D, Model, SiteStorage<Exec, D, Model>> {
  using Storage = SiteStorage<Exec, D, Model>;
  using Sums = typename Model::Sums;

 public:
  explicit LangevinPass(const PassContext<Exec, D, Model, Storage>& context)
      : c_(context), integrator_(checked(context).exec, context.settings, context.box) {}

  bool handles(UpdateAlgorithm algorithm) const override { return is_whole_lattice(algorithm); }

  void run(UpdateAlgorithm algorithm, uint32_t index, uint64_t sweep, bool, Sums*) override {
    if (!integrator_.shift_ready()) set_shift();
    integrator_.step(c_.lattice, c_.params, c_.storage.sites(), c_.storage.scratch(),
                     algorithm == UpdateAlgorithm::mala, sweep, index);
  }

  /// The kernel's shift is re-estimated from the field (always: it is not an input), then the
  /// MALA acceptance is read and, with tuning, the step rescaled.
  void end_thermalization(uint64_t) override {
    set_shift();
    acceptance_ = integrator_.take_acceptance();
    if (c_.settings.tune_step && acceptance_ >= 0) {
      integrator_.set_step(
          tuned_step(integrator_.step(), acceptance_, c_.settings.target_acceptance));
    }
  }

  void report(StepTuning& tuning) const override {
    const auto& sequence = c_.settings.sequence;
    tuning.langevin = true;
    tuning.adjusted = std::count(sequence.begin(), sequence.end(), UpdateAlgorithm::mala) > 0;
    tuning.langevin_step = integrator_.step();
    tuning.langevin_shift = integrator_.shift();
    tuning.langevin_acceptance = acceptance_;
  }

  void save(EngineState& state) const override {
    state.langevin_shift_set = integrator_.shift_ready();
  }

  void restore(const EngineState& state) override {
    integrator_.set_step(state.tuning.langevin_step);
    if (state.langevin_shift_set) integrator_.restore_shift(c_.params, state.tuning.langevin_shift);
    acceptance_ = state.tuning.langevin_acceptance;
  }

 private:
  void set_shift() {
    integrator_.set_shift(c_.lattice, c_.params, c_.storage.sites(), c_.storage.scratch());
  }

  /// The context, once it is one these moves work on (any backend and rank count).
  static const PassContext<Exec, D, Model, Storage>& checked(
      const PassContext<Exec, D, Model, Storage>& c) {
    if (c.tempering.on()) {  // the Fourier kernel has one set of couplings
      throw InputError(
          "update.sequence: langevin and mala are not available with parallel tempering "
          "([tempering]); use metropolis, overrelaxation or cluster passes");
    }
    return c;
  }

  PassContext<Exec, D, Model, Storage> c_;
  FourierLangevin<Exec, D, Model> integrator_;
  double acceptance_ = -1.0;
};

}  // namespace lattica

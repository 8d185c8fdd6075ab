#pragma once
// The whole-lattice Fourier-accelerated Langevin pass of a LatticeEngine, unadjusted or
// Metropolis-adjusted (MALA): its buffers, FFT plan, step size and the free kernel's shift,
// sequencing the functors of kernels/spectral/langevin.hpp on either backend.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/lattice/checkerboard.hpp"
#include "kernels/spectral/complex.hpp"
#include "kernels/spectral/langevin.hpp"

namespace lattica {

template <class Exec, int D, class Model>
class FourierLangevin {
  using Spin = typename Model::Spin;
  using Params = typename Model::Params;

 public:
  /// `exec` must outlive this object; step is the Langevin time step epsilon.
  FourierLangevin(const Exec& exec, const std::vector<int64_t>& dims, int replicas, double step)
      : exec_(exec),
        replicas_(replicas),
        step_(step),
        fft_(exec.make_fft(dims, replicas)),
        volume_(fft_->real_size()),
        modes_(fft_->complex_size()),
        proposal_(exec.template allocate<Spin>(replicas * volume_)),
        force_(exec.template allocate<double>(replicas * volume_)),
        work_(exec.template allocate<double>(replicas * volume_)),
        force_modes_(exec.template allocate<Complex>(replicas * modes_)),
        work_modes_(exec.template allocate<Complex>(replicas * modes_)),
        local_(exec.template allocate<MalaLocal>(replicas)),
        quadratic_(exec.template allocate<double>(2 * replicas)),
        accept_(exec.template allocate<uint8_t>(replicas)),
        accepted_total_(exec.template allocate<long long>(1)),
        inverse_kernel_(exec.template allocate<double>(modes_)) {
    kernel_.rank = static_cast<int>(dims.size());
    for (int a = 0; a < kernel_.rank; ++a) kernel_.dims[a] = dims[a];
    kernel_.inverse = inverse_kernel_.data();
    reset_acceptance();
  }

  /// Sets the kernel's shift to the Hartree (self-consistent Gaussian) estimate of the
  /// interaction's curvature, lambda (12 <phi^2> - 4), from the current field, so the free
  /// part is the best Gaussian approximation of the action: M'(0) is then close to the inverse
  /// susceptibility, which the drift divides by. M'(0) is kept at least at the lowest nonzero
  /// lattice momentum's 2 kappa p_hat^2 (the free part must stay positive); at lambda = 0 the
  /// shift is 0 and the free field is sampled exactly. A shift above the true curvature only
  /// slows the step down, one below it can make the unadjusted dynamics diverge, so the first
  /// estimate (from the start configuration, hot or cold) takes <phi^2> at least 1, the
  /// minima of the local potential.
  void set_shift(const Params& p, const Spin* spins) {
    kernel_.kappa = p.kappa;
    kernel_.shift = p.lambda == 0.0 ? 0.0 : hartree_shift(p, spins);
    exec_.for_each(modes_, kernel_);
    shift_ready_ = true;
  }

  /// Sets a shift estimated earlier (resuming a chain).
  void restore_shift(const Params& p, double shift) {
    kernel_.kappa = p.kappa;
    kernel_.shift = shift;
    exec_.for_each(modes_, kernel_);
    shift_ready_ = true;
  }

  bool shift_ready() const { return shift_ready_; }
  double shift() const { return kernel_.shift; }
  double step() const { return step_; }
  void set_step(double step) { step_ = step; }

  /// One Langevin step of every replica (MALA when `adjusted`). spins: checkerboard storage,
  /// updated in place; lexicographic: scratch of the same size. Asynchronous.
  void step(const Checkerboard<D>& lattice, const Params& p, Spin* spins, Spin* lexicographic,
            bool adjusted, uint64_t sweep, uint32_t pass) {
    const int64_t sites = replicas_ * volume_;
    const double a = std::exp(-step_);
    exec_.to_lexicographic(lattice, spins, lexicographic, replicas_);
    exec_.for_each(sites, LangevinForces<Model>{p, kernel_.shift, lexicographic, force_.data(),
                                                work_.data(), volume_, sweep, pass});
    fft_->forward(force_.data(), force_modes_.data());
    fft_->forward(work_.data(), work_modes_.data());
    if (adjusted) queue_quadratic(0);
    exec_.for_each(replicas_ * modes_,
                   LangevinDisplacement{inverse_kernel_.data(), force_modes_.data(),
                                        work_modes_.data(), modes_, a});
    fft_->inverse(work_modes_.data(), work_.data());
    const double inverse_volume = 1.0 / static_cast<double>(volume_);
    if (!adjusted) {
      exec_.for_each(
          sites, LangevinMove<Spin>{lexicographic, work_.data(), lexicographic, a, inverse_volume});
      exec_.from_lexicographic(lattice, lexicographic, spins, replicas_);
      return;
    }
    exec_.for_each(sites, LangevinMove<Spin>{lexicographic, work_.data(), proposal_.data(), a,
                                             inverse_volume});
    // F(phi') into work_, its spectrum for F' A^{-1} F'.
    exec_.for_each(sites, LangevinForces<Model>{p, kernel_.shift, proposal_.data(), work_.data(),
                                                nullptr, volume_, sweep, pass});
    fft_->forward(work_.data(), force_modes_.data());
    queue_quadratic(1);
    for (int r = 0; r < replicas_; ++r) {
      const int64_t offset = r * volume_;
      exec_.template reduce_sum_into<MalaLocal>(
          volume_,
          MalaLocalTerms<Model>{p, kernel_.shift, a, lexicographic + offset,
                                proposal_.data() + offset, force_.data() + offset,
                                work_.data() + offset},
          local_.data() + r);
    }
    exec_.for_each(1, MalaDecide{local_.data(), quadratic_.data(), accept_.data(),
                                 accepted_total_.data(), p.seed, sweep, pass, replicas_, a});
    exec_.for_each(sites,
                   MalaApply<Spin>{accept_.data(), proposal_.data(), lexicographic, volume_});
    exec_.from_lexicographic(lattice, lexicographic, spins, replicas_);
    proposals_ += replicas_;
  }

  /// Fraction of MALA proposals accepted since the last call (-1 when none were made).
  double take_acceptance() {
    if (proposals_ == 0) return -1.0;
    long long accepted = 0;
    exec_.copy_to_host(accepted_total_, &accepted);
    const double fraction = static_cast<double>(accepted) / static_cast<double>(proposals_);
    reset_acceptance();
    return fraction;
  }

 private:
  /// lambda (12 <phi^2> - 4), kept where M'(0) >= the floor (see set_shift).
  double hartree_shift(const Params& p, const Spin* spins) const {
    const int64_t sites = replicas_ * volume_;
    double phi2 = exec_.template reduce_sum<double>(sites, FieldSquared<Spin>{spins}) /
                  static_cast<double>(sites);
    if (!shift_ready_) phi2 = std::max(phi2, 1.0);
    const int64_t longest = *std::max_element(kernel_.dims, kernel_.dims + kernel_.rank);
    const double lowest_momentum = 2.0 * std::sin(3.141592653589793 / longest);
    const double floor = std::max(2.0 * p.kappa * lowest_momentum * lowest_momentum, 0.01);
    const double m0 = 2.0 - 4.0 * D * p.kappa;
    return std::max(p.lambda * (12.0 * phi2 - 4.0), floor - m0);
  }

  /// quadratic_[2 r + which] = F A^{-1} F of replica r, from the spectrum in force_modes_.
  void queue_quadratic(int which) {
    for (int r = 0; r < replicas_; ++r) {
      exec_.template reduce_sum_into<double>(
          modes_,
          KernelQuadratic{inverse_kernel_.data(), force_modes_.data() + r * modes_,
                          kernel_.dims[kernel_.rank - 1], static_cast<double>(volume_)},
          quadratic_.data() + 2 * r + which);
    }
  }

  void reset_acceptance() {
    const long long zero = 0;
    exec_.copy_to_device(&zero, accepted_total_);
    proposals_ = 0;
  }

  const Exec& exec_;
  int replicas_;
  double step_;
  FreeKernel kernel_{};
  bool shift_ready_ = false;
  std::unique_ptr<typename Exec::Fft> fft_;
  int64_t volume_, modes_;
  typename Exec::template Buffer<Spin> proposal_;
  typename Exec::template Buffer<double> force_, work_;  ///< F(phi); noise, displacement, F(phi')
  typename Exec::template Buffer<Complex> force_modes_, work_modes_;
  typename Exec::template Buffer<MalaLocal> local_;
  typename Exec::template Buffer<double> quadratic_;
  typename Exec::template Buffer<uint8_t> accept_;
  typename Exec::template Buffer<long long> accepted_total_;
  typename Exec::template Buffer<double> inverse_kernel_;  ///< 1 / M'(k) on the half spectrum
  long long proposals_ = 0;
};

}  // namespace lattica

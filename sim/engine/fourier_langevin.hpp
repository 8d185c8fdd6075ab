#pragma once
// The whole-lattice Fourier-accelerated Langevin pass of a LatticeEngine, unadjusted or
// Metropolis-adjusted (MALA): its buffers, FFT plan, step size and the free kernel's shift,
// sequencing the functors of kernels/spectral/langevin.hpp on either backend.
//
// Decomposed over ranks (either backend: host memory and MPI, or device memory and NCCL), each
// step moves the rank's box to its slab of axis 0 (BoxSlabs), takes the step there through the
// distributed FFT (SlabFft), adding the sums of the acceptance and the shift over the ranks,
// moves the slab back and exchanges the ghosts.
// The noise is keyed by the whole lattice's sites, so the chain is the single process's to
// rounding.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/lattice/checkerboard.hpp"
#include "kernels/spectral/complex.hpp"
#include "kernels/spectral/langevin.hpp"
#include "sim/engine/decomposed_box.hpp"
#include "sim/parallel/box_slabs.hpp"
#include "sim/parallel/slab_fft.hpp"

namespace lattica {

template <class Exec, int D, class Model>
class FourierLangevin {
  using Spin = typename Model::Spin;
  using Params = typename Model::Params;

 public:
  /// `exec` and `box` (this rank's box; null when the lattice is not decomposed)
  /// must outlive this object; the step is settings.langevin_step, the time step epsilon.
  FourierLangevin(const Exec& exec, const EngineSettings& settings, DecomposedBox<Exec, D>* box)
      : exec_(exec),
        replicas_(settings.replicas),
        step_(settings.langevin_step),
        box_(box),
        total_volume_(volume_of(settings.dims)) {
    if (box_) {
      Communicator& ranks = box_->communicator();
      slab_fft_ = &box_->slab_ffts()(replicas_);
      slabs_ = std::make_unique<BoxSlabs<Exec>>(exec, ranks, box_->decomposition(),
                                                slab_fft_->row_split(), replicas_, sizeof(Spin));
      volume_ = slabs_->slab_sites();
      modes_ = slab_fft_->local_complex_size() / replicas_;
      const int d = static_cast<int>(settings.dims.size());
      first_site_ = slab_fft_->first_row() * (total_volume_ / settings.dims[0]);
      kernel_.first_mode =
          slab_fft_->first_row() * (half_spectrum_size(settings.dims.data(), d) / settings.dims[0]);
      if (!slabs_->identity()) slab_field_ = exec.template allocate<Spin>(replicas_ * volume_);
    } else {
      fft_ = exec.make_fft(settings.dims, replicas_);
      volume_ = fft_->real_size();
      modes_ = fft_->complex_size();
    }
    proposal_ = exec.template allocate<Spin>(replicas_ * volume_);
    force_ = exec.template allocate<double>(replicas_ * volume_);
    work_ = exec.template allocate<double>(replicas_ * volume_);
    force_modes_ = exec.template allocate<Complex>(replicas_ * modes_);
    work_modes_ = exec.template allocate<Complex>(replicas_ * modes_);
    local_ = exec.template allocate<MalaLocal>(replicas_);
    quadratic_ = exec.template allocate<double>(2 * replicas_);
    accept_ = exec.template allocate<uint8_t>(replicas_);
    accepted_total_ = exec.template allocate<long long>(1);
    inverse_kernel_ = exec.template allocate<double>(modes_);
    kernel_.rank = static_cast<int>(settings.dims.size());
    for (int a = 0; a < kernel_.rank; ++a) kernel_.dims[a] = settings.dims[a];
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
  /// minima of the local potential. spins: the storage (as step() takes it); lexicographic:
  /// scratch of its size. Decomposed: collective.
  void set_shift(const Checkerboard<D>& lattice, const Params& p, const Spin* spins,
                 Spin* lexicographic) {
    kernel_.kappa = p.kappa;
    kernel_.shift = p.lambda == 0.0 ? 0.0 : hartree_shift(lattice, p, spins, lexicographic);
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

  /// One Langevin step of every replica (MALA when `adjusted`). spins: checkerboard storage
  /// (decomposed: this rank's box with its ghosts, which are exchanged afterwards), updated in
  /// place; lexicographic: scratch of the same size. Asynchronous; decomposed: collective.
  void step(const Checkerboard<D>& lattice, const Params& p, Spin* spins, Spin* lexicographic,
            bool adjusted, uint64_t sweep, uint32_t pass) {
    exec_.to_lexicographic(lattice, spins, lexicographic, replicas_);
    if (!box_) {
      step_field(p, lexicographic, adjusted, sweep, pass);
    } else {
      Spin* interior = box_->interior_sites(lexicographic, interior_);
      // The box is the slab where the boxes split axis 0 as the slabs do.
      Spin* slab = slabs_->identity() ? interior : slab_field_.data();
      slabs_->to_slab(interior, slab);
      step_field(p, slab, adjusted, sweep, pass);
      slabs_->to_box(slab, interior);
      if (interior == interior_.data())
        box_->scatter_interior(interior_.data(), lexicographic, sizeof(Spin));
    }
    exec_.from_lexicographic(lattice, lexicographic, spins, replicas_);
    if (box_) box_->exchange_all(spins);
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
  /// The step of the lexicographic field held (the whole lattice, or this rank's slab).
  void step_field(const Params& p, Spin* field, bool adjusted, uint64_t sweep, uint32_t pass) {
    const int64_t sites = replicas_ * volume_;
    const double a = std::exp(-step_);
    exec_.for_each(sites, LangevinForces<Model>{p, kernel_.shift, field, force_.data(),
                                                work_.data(), volume_, first_site_, sweep, pass});
    forward(force_.data(), force_modes_.data());
    forward(work_.data(), work_modes_.data());
    if (adjusted) queue_quadratic(0);
    exec_.for_each(replicas_ * modes_,
                   LangevinDisplacement{inverse_kernel_.data(), force_modes_.data(),
                                        work_modes_.data(), modes_, a});
    inverse(work_modes_.data(), work_.data());  // overwrites work_modes_, not needed after
    const double inverse_volume = 1.0 / static_cast<double>(total_volume_);
    if (!adjusted) {
      exec_.for_each(sites, LangevinMove<Spin>{field, work_.data(), field, a, inverse_volume});
      return;
    }
    exec_.for_each(sites,
                   LangevinMove<Spin>{field, work_.data(), proposal_.data(), a, inverse_volume});
    // F(phi') into work_, its spectrum for F' A^{-1} F'.
    exec_.for_each(sites, LangevinForces<Model>{p, kernel_.shift, proposal_.data(), work_.data(),
                                                nullptr, volume_, first_site_, sweep, pass});
    forward(work_.data(), force_modes_.data());
    queue_quadratic(1);
    for (int r = 0; r < replicas_; ++r) {
      const int64_t offset = r * volume_;
      exec_.template reduce_sum_into<MalaLocal>(
          volume_,
          MalaLocalTerms<Model>{p, kernel_.shift, a, field + offset, proposal_.data() + offset,
                                force_.data() + offset, work_.data() + offset},
          local_.data() + r);
    }
    if (box_) {  // each rank's share of the sums
      sum_buffer_over_ranks(exec_, box_->communicator(), local_);
      sum_buffer_over_ranks(exec_, box_->communicator(), quadratic_);
    }
    exec_.for_each(1, MalaDecide{local_.data(), quadratic_.data(), accept_.data(),
                                 accepted_total_.data(), p.seed, sweep, pass, replicas_, a});
    exec_.for_each(sites, MalaApply<Spin>{accept_.data(), proposal_.data(), field, volume_});
    proposals_ += replicas_;
  }

  /// The FFTs of the field held: the single process's, or the distributed one (collective).
  /// The inverse overwrites its input.
  void forward(const double* in, Complex* out) {
    if (slab_fft_) return slab_fft_->forward(in, out);
    fft_->forward(in, out);
  }
  void inverse(Complex* in, double* out) {
    if (slab_fft_) return slab_fft_->inverse_overwriting(in, out);
    fft_->inverse_overwriting(in, out);
  }

  /// lambda (12 <phi^2> - 4), kept where M'(0) >= the floor (see set_shift).
  double hartree_shift(const Checkerboard<D>& lattice, const Params& p, const Spin* spins,
                       Spin* lexicographic) {
    const int64_t sites = replicas_ * total_volume_;
    double sum = 0;
    if (!box_) {
      sum = exec_.template reduce_sum<double>(sites, FieldSquared<Spin>{spins});
    } else {  // this rank's interior (not its ghosts), added over the ranks
      exec_.to_lexicographic(lattice, spins, lexicographic, replicas_);
      sum = exec_.template reduce_sum<double>(
          replicas_ * slabs_->box_sites(),
          FieldSquared<Spin>{box_->interior_sites(lexicographic, interior_)});
      sum_over_ranks(box_->communicator(), &sum, 1);
    }
    double phi2 = sum / static_cast<double>(sites);
    if (!shift_ready_) phi2 = std::max(phi2, 1.0);
    const int64_t longest = *std::max_element(kernel_.dims, kernel_.dims + kernel_.rank);
    const double lowest_momentum = 2.0 * std::sin(3.141592653589793 / longest);
    const double floor = std::max(2.0 * p.kappa * lowest_momentum * lowest_momentum, 0.01);
    const double m0 = 2.0 - 4.0 * D * p.kappa;
    return std::max(p.lambda * (12.0 * phi2 - 4.0), floor - m0);
  }

  /// quadratic_[2 r + which] = F A^{-1} F of replica r (this rank's share when decomposed),
  /// from the spectrum in force_modes_.
  void queue_quadratic(int which) {
    for (int r = 0; r < replicas_; ++r) {
      exec_.template reduce_sum_into<double>(
          modes_,
          KernelQuadratic{inverse_kernel_.data(), force_modes_.data() + r * modes_,
                          kernel_.dims[kernel_.rank - 1], static_cast<double>(total_volume_)},
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
  DecomposedBox<Exec, D>* box_;  ///< this rank's box, or null
  FreeKernel kernel_{};
  bool shift_ready_ = false;
  std::unique_ptr<typename Exec::Fft> fft_;  ///< one process's FFT, or
  SlabFft<Exec>* slab_fft_ = nullptr;        ///< the ranks' (decomposed; the box's shared one)
  std::unique_ptr<BoxSlabs<Exec>> slabs_;    ///< decomposed: box <-> slab
  int64_t total_volume_;                     ///< sites of the whole lattice
  int64_t volume_ = 0, modes_ = 0;           ///< sites and modes held per replica
  int64_t first_site_ = 0;                   ///< whole-lattice index of the first site held
  /// Decomposed: the gathered box (see DecomposedBox::interior_sites), and the slab unless it
  /// is the box.
  typename Exec::template Buffer<Spin> interior_, slab_field_;
  typename Exec::template Buffer<Spin> proposal_;
  typename Exec::template Buffer<double> force_, work_;  ///< F(phi); noise, displacement, F(phi')
  typename Exec::template Buffer<Complex> force_modes_, work_modes_;
  typename Exec::template Buffer<MalaLocal> local_;
  typename Exec::template Buffer<double> quadratic_;
  typename Exec::template Buffer<uint8_t> accept_;
  typename Exec::template Buffer<long long> accepted_total_;
  typename Exec::template Buffer<double> inverse_kernel_;  ///< 1 / M'(k) on the modes held
  long long proposals_ = 0;
};

}  // namespace lattica

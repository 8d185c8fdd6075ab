#pragma once
// WalkerEnsemble on an execution policy (CpuExec or CudaExec): compiled once per backend.

#include <chrono>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "kernels/ensemble/multicanonical.hpp"
#include "kernels/ensemble/multicanonical_continuous.hpp"
#include "kernels/models/ising.hpp"
#include "kernels/models/potts.hpp"
#include "sim/engine/multicanonical/walker_ensemble.hpp"

namespace lattica {

/// Sets every walker's initial spins.
struct MucaStartFunctor {
  MucaWalkers m;
  bool hot;
  LATTICA_HD_INLINE void operator()(int64_t i) const {
    const int64_t w = i / m.lattice.volume, x = i % m.lattice.volume;
    m.spins[i] = muca_initial_state(m.seed, m.q, hot, w, x);
  }
};

/// Counts every walker's bin from scratch.
struct MucaCountFunctor {
  MucaWalkers m;
  LATTICA_HD_INLINE void operator()(int64_t w) const {
    m.satisfied[w] = muca_count_satisfied(m, w);
  }
};

/// Runs sweeps of one walker per `lanes` indices (32 on the GPU: a warp per walker; 1 on the
/// CPU), recording its bin after each in trace[s * walkers + w].
struct MucaSweepFunctor {
  MucaWalkers m;
  uint64_t first;
  int64_t sweeps;
  int32_t* trace;
  int lanes;
  LATTICA_HD_INLINE void operator()(int64_t i) const {
    const int64_t w = i / lanes;
    const int lane = static_cast<int>(i % lanes);
    for (int64_t s = 0; s < sweeps; ++s) {
      const uint64_t sweep = first + static_cast<uint64_t>(s);
#if defined(__CUDA_ARCH__)
      if (lanes == 32 && m.lattice.even()) {
        muca_walker_sweep_warp(m, w, sweep, lane);
      } else if (lane == 0) {
        muca_walker_sweep(m, w, sweep);
      }
      __syncwarp();  // lane 0 wrote the walker's bin
#else
      muca_walker_sweep(m, w, sweep);
#endif
      if (lane == 0) trace[s * m.walkers + w] = m.satisfied[w];
    }
  }
};

/// The bin of trace entry i, for the histogram.
struct MucaTraceBin {
  const int32_t* trace;
  LATTICA_HD_INLINE int64_t operator()(int64_t i) const { return trace[i]; }
};

/// Every walker's order parameter into out[w].
struct MucaOrderFunctor {
  MucaWalkers m;
  double* out;
  LATTICA_HD_INLINE void operator()(int64_t w) const { out[w] = muca_order(m, w); }
};

/// Continuous walkers: initial spins.
template <class Physics>
struct MucaContinuousStartFunctor {
  MucaContinuousWalkers<Physics> m;
  bool hot;
  LATTICA_HD_INLINE void operator()(int64_t i) const {
    m.spins[i] = m.initial(hot, i % m.walkers, i / m.walkers);
  }
};

/// Continuous walkers: every walker's energy from its spins.
template <class Physics>
struct MucaContinuousCountFunctor {
  MucaContinuousWalkers<Physics> m;
  LATTICA_HD_INLINE void operator()(int64_t w) const { m.energy[w] = m.count_energy(w); }
};

/// Continuous walkers: sweeps of one walker per index, its bin after each into the trace.
template <class Physics>
struct MucaContinuousSweepFunctor {
  MucaContinuousWalkers<Physics> m;
  uint64_t first;
  int64_t sweeps;
  int32_t* trace;
  LATTICA_HD_INLINE void operator()(int64_t w) const {
    for (int64_t s = 0; s < sweeps; ++s) {
      m.sweep(w, first + static_cast<uint64_t>(s));
      trace[s * m.walkers + w] = m.bins.bin(m.energy[w]);
    }
  }
};

/// Continuous walkers: every walker's order parameter and bin.
template <class Physics>
struct MucaContinuousOrderFunctor {
  MucaContinuousWalkers<Physics> m;
  double* out;
  LATTICA_HD_INLINE void operator()(int64_t w) const { out[w] = m.order(w); }
};
template <class Physics>
struct MucaContinuousBinFunctor {
  MucaContinuousWalkers<Physics> m;
  int32_t* out;
  LATTICA_HD_INLINE void operator()(int64_t w) const { out[w] = m.bins.bin(m.energy[w]); }
};

/// What both kinds of walkers share: the backend, the trace of bins and its histogram.
template <class Exec>
class ExecWalkerBase : public WalkerEnsemble {
 public:
  template <class... ExecArgs>
  ExecWalkerBase(int64_t walkers, int64_t bins, ExecArgs&&... exec_args)
      : exec_(std::forward<ExecArgs>(exec_args)...), walkers_(walkers), bins_(bins) {
    counts_ = exec_.template allocate<unsigned long long>(bins);
    orders_ = exec_.template allocate<double>(walkers);
    bin_now_ = exec_.template allocate<int32_t>(walkers);
  }

  std::string backend_name() const override { return Exec::kBackendName; }
  std::string device_name() const override { return exec_.device_name(); }
  double histogram_seconds() const override { return histogram_seconds_; }

  std::vector<int32_t> trace() const override {
    std::vector<int32_t> out(static_cast<size_t>(traced_ * walkers_));
    if (!out.empty()) exec_.copy_to_host(trace_, out.data(), traced_ * walkers_);
    return out;
  }

 protected:
  /// The trace for `sweeps` sweeps of every walker (grown when needed).
  int32_t* trace_buffer(int64_t sweeps) {
    if (trace_.size() < sweeps * walkers_)
      trace_ = exec_.template allocate<int32_t>(sweeps * walkers_);
    traced_ = sweeps;
    return trace_.data();
  }

  /// The histogram of the trace's first `sweeps` sweeps.
  std::vector<uint64_t> count_trace(int64_t sweeps) {
    exec_.synchronize();  // so that the clock below times the histogram alone
    const auto start = std::chrono::steady_clock::now();
    exec_.histogram(sweeps * walkers_, MucaTraceBin{trace_.data()}, bins_, counts_);
    std::vector<unsigned long long> counts(static_cast<size_t>(bins_));
    exec_.copy_to_host(counts_, counts.data());
    histogram_seconds_ +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return std::vector<uint64_t>(counts.begin(), counts.end());
  }

  template <class T>
  std::vector<T> host_copy(const typename Exec::template Buffer<T>& buffer) const {
    std::vector<T> out(static_cast<size_t>(buffer.size()));
    exec_.copy_to_host(buffer, out.data());
    return out;
  }

  /// The spins as bytes, and back (checking the size).
  template <class Spin>
  std::vector<uint8_t> spin_bytes(const typename Exec::template Buffer<Spin>& spins) const {
    const std::vector<Spin> s = host_copy(spins);
    std::vector<uint8_t> bytes(s.size() * sizeof(Spin));
    if (!s.empty()) std::memcpy(bytes.data(), s.data(), bytes.size());
    return bytes;
  }
  template <class Spin>
  std::vector<Spin> spins_of_bytes(const std::vector<uint8_t>& bytes, int64_t count) const {
    if (static_cast<int64_t>(bytes.size()) != count * static_cast<int64_t>(sizeof(Spin)))
      throw std::invalid_argument("multicanonical walkers: spins of another lattice or count");
    std::vector<Spin> s(static_cast<size_t>(count));
    if (count > 0) std::memcpy(s.data(), bytes.data(), bytes.size());
    return s;
  }

  Exec exec_;
  int64_t walkers_, bins_;
  mutable typename Exec::template Buffer<double> orders_;
  mutable typename Exec::template Buffer<int32_t> bin_now_;

 private:
  typename Exec::template Buffer<int32_t> trace_;
  int64_t traced_ = 0;  ///< sweeps in the trace (the last sweep() call's)
  typename Exec::template Buffer<unsigned long long> counts_;
  double histogram_seconds_ = 0.0;
};

/// Ising and Potts walkers in exact bins (k satisfied bonds).
template <class Exec>
class ExecWalkers final : public ExecWalkerBase<Exec> {
  using Base = ExecWalkerBase<Exec>;
  using Base::exec_;

 public:
  template <class... ExecArgs>
  ExecWalkers(const WalkerSettings& s, const MucaLattice& lattice, ExecArgs&&... exec_args)
      : Base(s.walkers, lattice.bonds() + 1, std::forward<ExecArgs>(exec_args)...) {
    spins_ = exec_.template allocate<uint8_t>(lattice.volume * s.walkers);
    satisfied_ = exec_.template allocate<int32_t>(s.walkers);
    thresholds_ = exec_.template allocate<uint64_t>(this->bins_ * (4 * lattice.d + 1));
    m_.seed = s.seed;
    m_.q = s.q;
    m_.lattice = lattice;
    m_.walkers = s.walkers;
    m_.spins = spins_.data();
    m_.satisfied = satisfied_.data();
    m_.threshold = thresholds_.data();
    exec_.for_each(lattice.volume * s.walkers, MucaStartFunctor{m_, s.hot});
    exec_.for_each(s.walkers, MucaCountFunctor{m_});
  }

  void set_weights(const std::vector<double>& log_weight, MucaWindow window) override {
    if (static_cast<int64_t>(log_weight.size()) != this->bins_)
      throw std::invalid_argument("multicanonical walkers: weights of another number of bins");
    const std::vector<uint64_t> t = muca_thresholds(log_weight, window, m_.lattice.d);
    exec_.copy_to_device(t.data(), thresholds_);
  }

  std::vector<uint64_t> sweep(uint64_t first, int64_t sweeps) override {
    exec_.for_each(
        m_.walkers * Exec::kWarpLanes,
        MucaSweepFunctor{m_, first, sweeps, this->trace_buffer(sweeps), Exec::kWarpLanes});
    return this->count_trace(sweeps);
  }

  std::vector<int32_t> bins() const override { return this->host_copy(satisfied_); }

  std::vector<double> energies() const override {
    std::vector<double> e;
    for (int32_t k : bins())
      e.push_back(static_cast<double>(muca_bin_energy(m_.q, m_.lattice.bonds(), k)));
    return e;
  }

  std::vector<double> orders() const override {
    exec_.for_each(m_.walkers, MucaOrderFunctor{m_, this->orders_.data()});
    return this->host_copy(this->orders_);
  }

  std::vector<uint8_t> spins() const override { return this->host_copy(spins_); }

  SnapshotFormat snapshot_format() const override {
    return m_.q == 2 ? IsingModel::snapshot_format({}) : PottsModel::snapshot_format({});
  }

  void set_spins(const std::vector<uint8_t>& spins) override {
    const std::vector<uint8_t> s = this->template spins_of_bytes<uint8_t>(spins, spins_.size());
    for (uint8_t state : s) {
      if (state >= m_.q) throw std::invalid_argument("multicanonical walkers: a spin beyond q");
    }
    exec_.copy_to_device(s.data(), spins_);
    exec_.for_each(m_.walkers, MucaCountFunctor{m_});
  }

 private:
  MucaWalkers m_;
  typename Exec::template Buffer<uint8_t> spins_;
  typename Exec::template Buffer<int32_t> satisfied_;
  typename Exec::template Buffer<uint64_t> thresholds_;
};

/// O(n) and phi^4 walkers in binned energies.
template <class Exec, class Physics>
class ExecContinuousWalkers final : public ExecWalkerBase<Exec> {
  using Base = ExecWalkerBase<Exec>;
  using Base::exec_;
  using Spin = typename Physics::Spin;

 public:
  template <class... ExecArgs>
  ExecContinuousWalkers(const WalkerSettings& s, const MucaLattice& lattice,
                        ExecArgs&&... exec_args)
      : Base(s.walkers, s.energy_bins.count + 2, std::forward<ExecArgs>(exec_args)...) {
    spins_ = exec_.template allocate<Spin>(lattice.volume * s.walkers);
    energy_ = exec_.template allocate<double>(s.walkers);
    log_weight_ = exec_.template allocate<double>(this->bins_);
    m_.seed = s.seed;
    m_.params = MucaContinuousParams{s.step, s.lambda};
    m_.hits = s.hits;
    m_.lattice = lattice;
    m_.bins = s.energy_bins;
    m_.walkers = s.walkers;
    m_.spins = spins_.data();
    m_.energy = energy_.data();
    m_.log_weight = log_weight_.data();
    exec_.for_each(lattice.volume * s.walkers, MucaContinuousStartFunctor<Physics>{m_, s.hot});
    exec_.for_each(s.walkers, MucaContinuousCountFunctor<Physics>{m_});
  }

  void set_weights(const std::vector<double>& log_weight, MucaWindow window) override {
    if (static_cast<int64_t>(log_weight.size()) != this->bins_ || window.first != 1 ||
        window.last != m_.bins.count)
      throw std::invalid_argument("multicanonical walkers: weights of other bins");
    exec_.copy_to_device(log_weight.data(), log_weight_);
  }

  std::vector<uint64_t> sweep(uint64_t first, int64_t sweeps) override {
    exec_.for_each(m_.walkers, MucaContinuousSweepFunctor<Physics>{m_, first, sweeps,
                                                                   this->trace_buffer(sweeps)});
    return this->count_trace(sweeps);
  }

  std::vector<int32_t> bins() const override {
    exec_.for_each(m_.walkers, MucaContinuousBinFunctor<Physics>{m_, this->bin_now_.data()});
    return this->host_copy(this->bin_now_);
  }

  std::vector<double> energies() const override { return this->host_copy(energy_); }

  std::vector<double> orders() const override {
    exec_.for_each(m_.walkers, MucaContinuousOrderFunctor<Physics>{m_, this->orders_.data()});
    return this->host_copy(this->orders_);
  }

  std::vector<uint8_t> spins() const override { return this->spin_bytes(spins_); }

  SnapshotFormat snapshot_format() const override { return Physics::Model::snapshot_format({}); }

  void set_spins(const std::vector<uint8_t>& spins) override {
    const std::vector<Spin> s = this->template spins_of_bytes<Spin>(spins, spins_.size());
    exec_.copy_to_device(s.data(), spins_);
    exec_.for_each(m_.walkers, MucaContinuousCountFunctor<Physics>{m_});
  }

 private:
  MucaContinuousWalkers<Physics> m_;
  typename Exec::template Buffer<Spin> spins_;
  typename Exec::template Buffer<double> energy_;
  typename Exec::template Buffer<double> log_weight_;
};

/// The walkers of settings.model on Exec (built from exec_args).
template <class Exec, class... ExecArgs>
std::unique_ptr<WalkerEnsemble> make_exec_walkers(const WalkerSettings& s,
                                                  ExecArgs&&... exec_args) {
  if (s.dims.empty() || s.dims.size() > kMucaMaxDims)
    throw std::invalid_argument("multicanonical walkers: 1 to 4 lattice dimensions");
  const MucaLattice lattice = make_muca_lattice(s.dims.data(), static_cast<int>(s.dims.size()));
  auto continuous = [&](auto physics) -> std::unique_ptr<WalkerEnsemble> {
    using Physics = decltype(physics);
    return std::make_unique<ExecContinuousWalkers<Exec, Physics>>(
        s, lattice, std::forward<ExecArgs>(exec_args)...);
  };
  auto on = [&](auto real) -> std::unique_ptr<WalkerEnsemble> {
    using Real = decltype(real);
    if (s.n == 2) return continuous(MucaOnPhysics<Real, 2>{});
    if (s.n == 3) return continuous(MucaOnPhysics<Real, 3>{});
    if (s.n == 4) return continuous(MucaOnPhysics<Real, 4>{});
    throw std::invalid_argument("multicanonical walkers: O(n) with n = 2 .. 4");
  };
  if (s.model == "on") return s.single_precision ? on(float{}) : on(double{});
  if (s.model == "phi4") {
    return s.single_precision ? continuous(MucaPhi4Physics<float>{})
                              : continuous(MucaPhi4Physics<double>{});
  }
  return std::make_unique<ExecWalkers<Exec>>(s, lattice, std::forward<ExecArgs>(exec_args)...);
}

}  // namespace lattica

#pragma once
// WalkerEnsemble on an execution policy (CpuExec or CudaExec): compiled once per backend.

#include <chrono>
#include <stdexcept>
#include <utility>

#include "kernels/ensemble/multicanonical.hpp"
#include "sim/engine/multicanonical/walker_ensemble.hpp"

namespace lattica {

/// Sets every walker's initial spins.
struct MucaStartFunctor {
  MucaWalkers m;
  bool hot;
  LATTICA_HD_INLINE void operator()(int64_t i) const {
    const int64_t x = i / m.walkers, w = i % m.walkers;
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

/// Runs sweeps of one walker per index, recording its bin after each in trace[s * walkers + w].
struct MucaSweepFunctor {
  MucaWalkers m;
  uint64_t first;
  int64_t sweeps;
  int32_t* trace;
  LATTICA_HD_INLINE void operator()(int64_t w) const {
    for (int64_t s = 0; s < sweeps; ++s) {
      muca_walker_sweep(m, w, first + static_cast<uint64_t>(s));
      trace[s * m.walkers + w] = m.satisfied[w];
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
  int32_t* out;
  LATTICA_HD_INLINE void operator()(int64_t w) const { out[w] = muca_order(m, w); }
};

template <class Exec>
class ExecWalkers final : public WalkerEnsemble {
 public:
  template <class... ExecArgs>
  explicit ExecWalkers(const WalkerSettings& s, ExecArgs&&... exec_args)
      : exec_(std::forward<ExecArgs>(exec_args)...) {
    if (s.dims.empty() || s.dims.size() > kMucaMaxDims)
      throw std::invalid_argument("multicanonical walkers: 1 to 4 lattice dimensions");
    lattice_ = make_muca_lattice(s.dims.data(), static_cast<int>(s.dims.size()));
    bins_ = lattice_.bonds() + 1;
    spins_ = exec_.template allocate<uint8_t>(lattice_.volume * s.walkers);
    satisfied_ = exec_.template allocate<int32_t>(s.walkers);
    orders_ = exec_.template allocate<int32_t>(s.walkers);
    thresholds_ = exec_.template allocate<uint64_t>(bins_ * (4 * lattice_.d + 1));
    counts_ = exec_.template allocate<unsigned long long>(bins_);
    m_.seed = s.seed;
    m_.q = s.q;
    m_.lattice = lattice_;
    m_.walkers = s.walkers;
    m_.spins = spins_.data();
    m_.satisfied = satisfied_.data();
    m_.threshold = thresholds_.data();
    exec_.for_each(lattice_.volume * s.walkers, MucaStartFunctor{m_, s.hot});
    exec_.for_each(s.walkers, MucaCountFunctor{m_});
  }

  void set_thresholds(const std::vector<uint64_t>& thresholds) override {
    if (static_cast<int64_t>(thresholds.size()) != thresholds_.size())
      throw std::invalid_argument("multicanonical walkers: threshold table of the wrong size");
    exec_.copy_to_device(thresholds.data(), thresholds_);
  }

  std::vector<uint64_t> sweep(uint64_t first, int64_t sweeps) override {
    if (trace_.size() < sweeps * m_.walkers)
      trace_ = exec_.template allocate<int32_t>(sweeps * m_.walkers);
    exec_.for_each(m_.walkers, MucaSweepFunctor{m_, first, sweeps, trace_.data()});
    exec_.synchronize();  // so that the clock below times the histogram alone
    const auto start = std::chrono::steady_clock::now();
    exec_.histogram(sweeps * m_.walkers, MucaTraceBin{trace_.data()}, bins_, counts_);
    std::vector<unsigned long long> counts(static_cast<size_t>(bins_));
    exec_.copy_to_host(counts_, counts.data());
    histogram_seconds_ +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return std::vector<uint64_t>(counts.begin(), counts.end());
  }

  std::vector<int32_t> bins() const override { return host_copy(satisfied_); }

  std::vector<int32_t> orders() const override {
    exec_.for_each(m_.walkers, MucaOrderFunctor{m_, orders_.data()});
    return host_copy(orders_);
  }

  std::vector<uint8_t> spins() const override { return host_copy(spins_); }

  void set_spins(const std::vector<uint8_t>& spins) override {
    if (static_cast<int64_t>(spins.size()) != spins_.size())
      throw std::invalid_argument("multicanonical walkers: spins of another lattice or count");
    for (uint8_t s : spins) {
      if (s >= m_.q) throw std::invalid_argument("multicanonical walkers: a spin beyond q");
    }
    exec_.copy_to_device(spins.data(), spins_);
    exec_.for_each(m_.walkers, MucaCountFunctor{m_});
  }

  std::string backend_name() const override { return Exec::kBackendName; }
  std::string device_name() const override { return exec_.device_name(); }
  double histogram_seconds() const override { return histogram_seconds_; }

 private:
  template <class T>
  std::vector<T> host_copy(const typename Exec::template Buffer<T>& buffer) const {
    std::vector<T> out(static_cast<size_t>(buffer.size()));
    exec_.copy_to_host(buffer, out.data());
    return out;
  }

  Exec exec_;
  MucaLattice lattice_;
  int64_t bins_ = 0;
  MucaWalkers m_;
  typename Exec::template Buffer<uint8_t> spins_;
  typename Exec::template Buffer<int32_t> satisfied_;
  mutable typename Exec::template Buffer<int32_t> orders_;
  typename Exec::template Buffer<uint64_t> thresholds_;
  typename Exec::template Buffer<int32_t> trace_;
  typename Exec::template Buffer<unsigned long long> counts_;
  double histogram_seconds_ = 0.0;
};

}  // namespace lattica

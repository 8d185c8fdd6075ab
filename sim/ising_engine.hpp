#pragma once
// The Ising sampler, written once over an execution policy (CpuExec or CudaExec).

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <utility>

#include "kernels/lattice/checkerboard.hpp"
#include "kernels/models/ising.hpp"
#include "sim/engine.hpp"

namespace lattica {

template <class Exec, int D>
class IsingEngine final : public Engine {
 public:
  template <class... ExecArgs>
  IsingEngine(const EngineSettings& settings, std::string backend, ExecArgs&&... exec_args)
      : exec_(std::forward<ExecArgs>(exec_args)...),
        lattice_(Checkerboard<D>::make(settings.dims.data())),
        params_(
            make_ising_params(D, settings.beta, settings.field, settings.algorithm, settings.seed)),
        settings_(settings),
        backend_(std::move(backend)),
        spins_(exec_.template allocate<int8_t>(settings.replicas * lattice_.volume())),
        lexicographic_(exec_.template allocate<int8_t>(settings.replicas * lattice_.volume())),
        sums_(
            exec_.template allocate<IsingSums>(settings.measurement_capacity * settings.replicas)),
        histograms_{{"energy",
                     "interaction energy E_J = -sum_<ij> s_i s_j (total, not per site; equals the "
                     "energy at h = 0) over all measurements and replicas",
                     {},
                     0},
                    {"magnetization",
                     "magnetization M = sum_i s_i (total, not per site) over all measurements and "
                     "replicas",
                     {},
                     0}} {}

  void initialize() override {
    exec_.for_each(replicas() * lattice_.volume(),
                   IsingInitialState<D>{lattice_, spins_.data(), settings_.seed,
                                        settings_.start == InitialState::hot});
  }

  void sweep(uint64_t first, uint64_t count) override {
    for (uint64_t s = first; s < first + count; ++s) {
      for (int colour = 0; colour < 2; ++colour) {
        exec_.for_each(replicas() * lattice_.half_volume,
                       IsingUpdateColour<D>{lattice_, params_, spins_.data(), colour, s});
      }
    }
  }

  std::vector<std::string> observable_names() const override { return {"energy", "magnetization"}; }

  void measure() override {
    if (queued_ >= settings_.measurement_capacity) {
      throw std::logic_error("IsingEngine::measure: queue full, collect() first");
    }
    for (int r = 0; r < replicas(); ++r) {
      exec_.template reduce_sum_into<IsingSums>(
          lattice_.half_volume, IsingSiteSums<D>{lattice_, spins_.data() + r * lattice_.volume()},
          sums_.data() + queued_ * replicas() + r);
    }
    ++queued_;
  }

  int64_t queued() const override { return queued_; }

  void collect(MeasurementBatch& out) override {
    const int64_t n = queued_ * replicas();
    host_sums_.resize(static_cast<size_t>(n));
    exec_.copy_to_host(sums_, host_sums_.data(), n);
    // Exact integers until this last step, so both backends give the same doubles.
    const double v = static_cast<double>(lattice_.volume());
    out.count = queued_;
    out.values.resize(static_cast<size_t>(2 * n));
    for (int64_t i = 0; i < n; ++i) {
      const IsingSums& s = host_sums_[static_cast<size_t>(i)];
      out.values[2 * i] =
          (-static_cast<double>(s.bonds) - settings_.field * static_cast<double>(s.magnetization)) /
          v;
      out.values[2 * i + 1] = static_cast<double>(s.magnetization) / v;
    }
    accumulate_histogram(histograms_[0], n, false);
    accumulate_histogram(histograms_[1], n, true);
    queued_ = 0;
  }

  const std::vector<ExactHistogram>& histograms() const override { return histograms_; }

  void configuration(int8_t* out) override {
    exec_.for_each(replicas() * lattice_.volume(),
                   GatherLexicographic<D, int8_t>{lattice_, spins_.data(), lexicographic_.data()});
    exec_.copy_to_host(lexicographic_, out);
  }

  int replicas() const override { return settings_.replicas; }
  int64_t volume() const override { return lattice_.volume(); }
  std::string backend_name() const override { return backend_; }
  std::string device_name() const override { return exec_.device_name(); }
  void synchronize() override { exec_.synchronize(); }

 private:
  /// Bins the queued totals (still in the backend's memory) over the window of values they
  /// span, then adds the window to the sparse exact histogram.
  void accumulate_histogram(ExactHistogram& h, int64_t n, bool magnetization) {
    if (n == 0) return;
    auto value = [&](const IsingSums& s) { return magnetization ? s.magnetization : s.bonds; };
    long long lowest = value(host_sums_[0]), highest = lowest;
    for (const IsingSums& s : host_sums_) {
      lowest = std::min(lowest, value(s));
      highest = std::max(highest, value(s));
    }
    const int64_t bins = (highest - lowest) / 2 + 1;
    if (counts_.size() < bins) counts_ = exec_.template allocate<unsigned long long>(bins);
    exec_.histogram(n, IsingTotalBin{sums_.data(), lowest, magnetization}, bins, counts_);
    host_counts_.resize(static_cast<size_t>(bins));
    exec_.copy_to_host(counts_, host_counts_.data(), bins);
    for (int64_t b = 0; b < bins; ++b) {
      if (host_counts_[b] == 0) continue;
      const long long total = lowest + 2 * b;
      // Stored as the energy -B for the bond sum, as M for the magnetization.
      h.counts[magnetization ? total : -total] += static_cast<long long>(host_counts_[b]);
    }
    h.samples += n;
  }

  Exec exec_;
  Checkerboard<D> lattice_;
  IsingParams params_;
  EngineSettings settings_;
  std::string backend_;
  typename Exec::template Buffer<int8_t> spins_;
  typename Exec::template Buffer<int8_t> lexicographic_;
  typename Exec::template Buffer<IsingSums> sums_;  ///< queued measurements, [k][replica]
  typename Exec::template Buffer<unsigned long long> counts_;
  int64_t queued_ = 0;
  std::vector<IsingSums> host_sums_;
  std::vector<unsigned long long> host_counts_;
  std::vector<ExactHistogram> histograms_;
};

/// Instantiates the engine for the dimension in settings (2, 3 or 4).
template <class Exec, class... ExecArgs>
std::unique_ptr<Engine> make_ising_engine(const EngineSettings& settings,
                                          const std::string& backend, ExecArgs&&... exec_args) {
  if (settings.replicas < 1 || settings.replicas > static_cast<int>(kMaxReplicas) ||
      settings.measurement_capacity < 1) {
    throw InputError("run.replicas: must be between 1 and " + std::to_string(kMaxReplicas));
  }
  switch (settings.dims.size()) {
    case 2:
      return std::make_unique<IsingEngine<Exec, 2>>(settings, backend, exec_args...);
    case 3:
      return std::make_unique<IsingEngine<Exec, 3>>(settings, backend, exec_args...);
    case 4:
      return std::make_unique<IsingEngine<Exec, 4>>(settings, backend, exec_args...);
    default:
      throw InputError("lattice.dims: the Ising engine supports 2 to 4 dimensions");
  }
}

}  // namespace lattica

#pragma once
// The sampler of every discrete spin model, written once over an execution policy (CpuExec or
// CudaExec) and a model (kernels/models/lattice_model.hpp).

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <utility>

#include "kernels/lattice/checkerboard.hpp"
#include "kernels/models/ising.hpp"
#include "kernels/models/lattice_model.hpp"
#include "kernels/models/potts.hpp"
#include "sim/engine.hpp"

namespace lattica {

inline IsingParams model_params(IsingModel, const EngineSettings& s, int d) {
  return make_ising_params(d, s.beta, s.field, s.algorithm, s.seed);
}
inline PottsParams model_params(PottsModel, const EngineSettings& s, int d) {
  return make_potts_params(d, s.q, s.beta, s.field, s.algorithm, s.seed);
}

template <class Exec, int D, class Model>
class LatticeEngine final : public Engine {
  using Spin = typename Model::Spin;
  using Sums = typename Model::Sums;

 public:
  template <class... ExecArgs>
  LatticeEngine(const EngineSettings& settings, std::string backend, ExecArgs&&... exec_args)
      : exec_(std::forward<ExecArgs>(exec_args)...),
        lattice_(Checkerboard<D>::make(settings.dims.data())),
        params_(model_params(Model{}, settings, D)),
        settings_(settings),
        backend_(std::move(backend)),
        spins_(exec_.template allocate<Spin>(settings.replicas * lattice_.volume())),
        lexicographic_(exec_.template allocate<Spin>(settings.replicas * lattice_.volume())),
        sums_(exec_.template allocate<Sums>(settings.measurement_capacity * settings.replicas)) {
    for (const HistogramInfo& info : Model::histograms()) {
      histograms_.push_back({info.name, info.description, {}, 0});
    }
  }

  void initialize() override {
    exec_.for_each(replicas() * lattice_.volume(),
                   Initialize<D, Model>{lattice_, params_, spins_.data(),
                                        settings_.start == InitialState::hot});
  }

  void sweep(uint64_t first, uint64_t count) override {
    for (uint64_t s = first; s < first + count; ++s) {
      for (int colour = 0; colour < 2; ++colour) {
        exec_.for_each(replicas() * lattice_.half_volume,
                       UpdateColour<D, Model>{lattice_, params_, spins_.data(), colour, s});
      }
    }
  }

  std::vector<std::string> observable_names() const override { return Model::observable_names(); }
  std::vector<std::string> observable_descriptions() const override {
    return Model::observable_descriptions();
  }

  void measure() override {
    if (queued_ >= settings_.measurement_capacity) {
      throw std::logic_error("LatticeEngine::measure: queue full, collect() first");
    }
    for (int r = 0; r < replicas(); ++r) {
      exec_.template reduce_sum_into<Sums>(
          lattice_.half_volume,
          SiteSums<D, Model>{lattice_, params_, spins_.data() + r * lattice_.volume()},
          sums_.data() + queued_ * replicas() + r);
    }
    ++queued_;
  }

  int64_t queued() const override { return queued_; }

  void collect(MeasurementBatch& out) override {
    const int64_t n = queued_ * replicas();
    host_sums_.resize(static_cast<size_t>(n));
    exec_.copy_to_host(sums_, host_sums_.data(), n);
    // Exact sums until this last step, so both backends give the same doubles.
    const size_t n_obs = Model::observable_names().size();
    out.count = queued_;
    out.values.resize(static_cast<size_t>(n) * n_obs);
    for (int64_t i = 0; i < n; ++i) {
      Model::observables(params_, host_sums_[static_cast<size_t>(i)],
                         static_cast<double>(lattice_.volume()), &out.values[i * n_obs]);
    }
    const std::vector<HistogramInfo> info = Model::histograms();
    for (size_t h = 0; h < histograms_.size(); ++h) {
      accumulate_histogram(histograms_[h], n, static_cast<int>(h), info[h].step);
    }
    queued_ = 0;
  }

  const std::vector<ExactHistogram>& histograms() const override { return histograms_; }

  void configuration(int8_t* out) override {
    exec_.for_each(replicas() * lattice_.volume(),
                   GatherLexicographic<D, Spin>{lattice_, spins_.data(), lexicographic_.data()});
    static_assert(sizeof(Spin) == 1, "configurations are written as one byte per site");
    exec_.copy_to_host(lexicographic_, reinterpret_cast<Spin*>(out));
  }

  int replicas() const override { return settings_.replicas; }
  int64_t volume() const override { return lattice_.volume(); }
  std::string backend_name() const override { return backend_; }
  std::string device_name() const override { return exec_.device_name(); }
  void synchronize() override { exec_.synchronize(); }

 private:
  /// Bins the queued totals (still in the backend's memory) over the window of values they
  /// span, then adds the window to the sparse exact histogram.
  void accumulate_histogram(ExactHistogram& h, int64_t n, int which, long long step) {
    if (n == 0) return;
    long long lowest = Model::histogram_total(host_sums_[0], which), highest = lowest;
    for (const Sums& s : host_sums_) {
      lowest = std::min(lowest, Model::histogram_total(s, which));
      highest = std::max(highest, Model::histogram_total(s, which));
    }
    const int64_t bins = (highest - lowest) / step + 1;
    if (counts_.size() < bins) counts_ = exec_.template allocate<unsigned long long>(bins);
    exec_.histogram(n, TotalBin<Model>{sums_.data(), lowest, step, which}, bins, counts_);
    host_counts_.resize(static_cast<size_t>(bins));
    exec_.copy_to_host(counts_, host_counts_.data(), bins);
    for (int64_t b = 0; b < bins; ++b) {
      if (host_counts_[b] != 0)
        h.counts[lowest + step * b] += static_cast<long long>(host_counts_[b]);
    }
    h.samples += n;
  }

  Exec exec_;
  Checkerboard<D> lattice_;
  typename Model::Params params_;
  EngineSettings settings_;
  std::string backend_;
  typename Exec::template Buffer<Spin> spins_;
  typename Exec::template Buffer<Spin> lexicographic_;
  typename Exec::template Buffer<Sums> sums_;  ///< queued measurements, [k][replica]
  typename Exec::template Buffer<unsigned long long> counts_;
  int64_t queued_ = 0;
  std::vector<Sums> host_sums_;
  std::vector<unsigned long long> host_counts_;
  std::vector<ExactHistogram> histograms_;
};

template <class Exec, class Model, class... ExecArgs>
std::unique_ptr<Engine> make_engine_for(const EngineSettings& settings, const std::string& backend,
                                        ExecArgs&&... exec_args) {
  switch (settings.dims.size()) {
    case 1:
      return std::make_unique<LatticeEngine<Exec, 1, Model>>(settings, backend, exec_args...);
    case 2:
      return std::make_unique<LatticeEngine<Exec, 2, Model>>(settings, backend, exec_args...);
    case 3:
      return std::make_unique<LatticeEngine<Exec, 3, Model>>(settings, backend, exec_args...);
    case 4:
      return std::make_unique<LatticeEngine<Exec, 4, Model>>(settings, backend, exec_args...);
    default:
      throw InputError("lattice.dims: 1 to 4 dimensions are supported");
  }
}

/// Instantiates the engine for the model and dimension in settings.
template <class Exec, class... ExecArgs>
std::unique_ptr<Engine> make_lattice_engine(const EngineSettings& settings,
                                            const std::string& backend, ExecArgs&&... exec_args) {
  if (settings.replicas < 1 || settings.replicas > static_cast<int>(kMaxReplicas) ||
      settings.measurement_capacity < 1) {
    throw InputError("run.replicas: must be between 1 and " + std::to_string(kMaxReplicas));
  }
  switch (settings.model) {
    case ModelKind::ising:
      return make_engine_for<Exec, IsingModel>(settings, backend, exec_args...);
    case ModelKind::potts:
      return make_engine_for<Exec, PottsModel>(settings, backend, exec_args...);
  }
  throw InputError("model.kind: unknown model");
}

}  // namespace lattica

#pragma once
// The Ising sampler, written once over an execution policy (CpuExec or CudaExec).

#include <memory>
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
        spins_(exec_.template allocate<int8_t>(lattice_.volume())),
        lexicographic_(exec_.template allocate<int8_t>(lattice_.volume())) {}

  void initialize() override {
    exec_.for_each(lattice_.volume(), IsingInitialState<D>{lattice_, spins_.data(), settings_.seed,
                                                           settings_.start == InitialState::hot});
  }

  void sweep(uint64_t first, uint64_t count) override {
    for (uint64_t s = first; s < first + count; ++s) {
      for (int colour = 0; colour < 2; ++colour) {
        exec_.for_each(lattice_.half_volume,
                       IsingUpdateColour<D>{lattice_, params_, spins_.data(), colour, s});
      }
    }
  }

  std::vector<std::string> observable_names() const override { return {"energy", "magnetization"}; }

  void measure(double* out) override {
    const IsingSums sums = exec_.template reduce_sum<IsingSums>(
        lattice_.half_volume, IsingSiteSums<D>{lattice_, spins_.data()});
    // Exact integers until this last step, so both backends give the same doubles.
    const double v = static_cast<double>(lattice_.volume());
    out[0] = (-static_cast<double>(sums.bonds) -
              settings_.field * static_cast<double>(sums.magnetization)) /
             v;
    out[1] = static_cast<double>(sums.magnetization) / v;
  }

  void configuration(int8_t* out) override {
    exec_.for_each(lattice_.volume(),
                   GatherLexicographic<D, int8_t>{lattice_, spins_.data(), lexicographic_.data()});
    exec_.copy_to_host(lexicographic_, out);
  }

  int64_t volume() const override { return lattice_.volume(); }
  std::string backend_name() const override { return backend_; }
  std::string device_name() const override { return exec_.device_name(); }
  void synchronize() override { exec_.synchronize(); }

 private:
  Exec exec_;
  Checkerboard<D> lattice_;
  IsingParams params_;
  EngineSettings settings_;
  std::string backend_;
  typename Exec::template Buffer<int8_t> spins_;
  typename Exec::template Buffer<int8_t> lexicographic_;
};

/// Instantiates the engine for the dimension in settings (2, 3 or 4).
template <class Exec, class... ExecArgs>
std::unique_ptr<Engine> make_ising_engine(const EngineSettings& settings,
                                          const std::string& backend, ExecArgs&&... exec_args) {
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

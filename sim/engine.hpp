#pragma once
// The run loop's view of a sampler: plain types only, so .cu files can include it without
// the configuration or output libraries.

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/models/ising.hpp"

namespace lattica {

/// Bad input found after parsing (e.g. a lattice too large for the chosen device): exit 2.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class InitialState { cold, hot };

/// What an engine needs to know; derived from the validated configuration.
struct EngineSettings {
  std::vector<int64_t> dims;
  double beta = 0.0;
  double field = 0.0;
  IsingAlgorithm algorithm = IsingAlgorithm::metropolis;
  uint64_t seed = 0;
  InitialState start = InitialState::hot;
  int cpu_threads = 0;  ///< 0: OpenMP default
  int cuda_device = 0;
  int cuda_block_size = 256;  ///< threads per block; the chain does not depend on it
};

/// A Markov chain on one backend. Sweep indices are global: sweep k always uses the random
/// numbers of sweep k, whoever runs it, which makes chains independent of how they are cut.
class Engine {
 public:
  virtual ~Engine() = default;
  /// Sets the configuration at sweep 0.
  virtual void initialize() = 0;
  /// Performs sweeps first, first+1, ..., first+count-1 (each: colour 0, then colour 1).
  virtual void sweep(uint64_t first, uint64_t count) = 0;
  /// Names of the per-site observables measure() returns, in order.
  virtual std::vector<std::string> observable_names() const = 0;
  /// Measures the current configuration; out has observable_names().size() entries.
  virtual void measure(double* out) = 0;
  /// Copies the configuration in lexicographic order into out (volume() entries).
  virtual void configuration(int8_t* out) = 0;
  virtual int64_t volume() const = 0;
  virtual std::string backend_name() const = 0;  ///< "cpu" or "cuda"
  virtual std::string device_name() const = 0;
  virtual void synchronize() = 0;
};

/// The CPU reference engine.
std::unique_ptr<Engine> make_cpu_engine(const EngineSettings& settings);

/// Number of usable CUDA devices; when 0, `reason` says why (no toolkit, no driver, ...).
int cuda_device_count(std::string& reason);

/// The CUDA engine. Throws InputError when the lattice does not fit in device memory.
std::unique_ptr<Engine> make_cuda_engine(const EngineSettings& settings);

}  // namespace lattica

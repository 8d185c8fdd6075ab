#pragma once
// The run loop's view of a sampler: plain types only, so .cu files can include it without
// the configuration or output libraries.

#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/models/lattice_model.hpp"
#include "kernels/rng/philox.hpp"

namespace lattica {

/// Bad input found after parsing (e.g. a lattice too large for the chosen device): exit 2.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class InitialState { cold, hot };
enum class ModelKind { ising, potts };

/// What an engine needs to know; derived from the validated configuration.
struct EngineSettings {
  ModelKind model = ModelKind::ising;
  int q = 2;  ///< Potts states
  std::vector<int64_t> dims;
  double beta = 0.0;
  double field = 0.0;
  UpdateAlgorithm algorithm = UpdateAlgorithm::metropolis;
  uint64_t seed = 0;
  InitialState start = InitialState::hot;
  int replicas = 1;  ///< independent chains of the same parameters, updated together
  int64_t measurement_capacity = 1024;  ///< measurements queued before collect() must run
  int cpu_threads = 0;                  ///< 0: OpenMP default
  int cuda_device = 0;
  int cuda_block_size = 256;  ///< threads per block; the chain does not depend on it
};

/// Measurements moved to the host, in order: values[(k * replicas + r) * observables + o].
struct MeasurementBatch {
  int64_t count = 0;
  std::vector<double> values;
};

/// A histogram with one bin per attainable integer value; only values that occurred are kept.
struct ExactHistogram {
  std::string name;
  std::string description;
  std::map<long long, long long> counts;  ///< value -> number of samples
  long long samples = 0;
};

/// A Markov chain (or several replicas of it) on one backend. Sweep indices are global: sweep
/// k always uses the random numbers of sweep k, whoever runs it, so chains do not depend on
/// how the sweeps are cut into calls.
class Engine {
 public:
  virtual ~Engine() = default;
  /// Sets the configuration at sweep 0.
  virtual void initialize() = 0;
  /// Performs sweeps first, first+1, ..., first+count-1 (each: colour 0, then colour 1).
  virtual void sweep(uint64_t first, uint64_t count) = 0;
  /// Names of the per-site observables each measurement yields per replica, in order.
  virtual std::vector<std::string> observable_names() const = 0;
  virtual std::vector<std::string> observable_descriptions() const = 0;
  /// Queues a measurement of every replica (on the GPU without waiting for it).
  /// Precondition: queued() < settings.measurement_capacity.
  virtual void measure() = 0;
  virtual int64_t queued() const = 0;
  /// Moves the queued measurements into `out` (replacing its contents) and into histograms().
  virtual void collect(MeasurementBatch& out) = 0;
  /// Exact histograms of everything collected so far.
  virtual const std::vector<ExactHistogram>& histograms() const = 0;
  /// Copies every replica's configuration in lexicographic order into out
  /// (replicas() * volume() entries, replica-major).
  virtual void configuration(int8_t* out) = 0;
  virtual int replicas() const = 0;
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

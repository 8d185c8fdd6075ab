#pragma once
// The run loop's view of a sampler: plain types only, so .cu files can include it without
// the configuration or output libraries.

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/models/ising_packed.hpp"
#include "kernels/models/lattice_model.hpp"
#include "kernels/rng/philox.hpp"
#include "sim/communicator.hpp"

namespace lattica {

/// Bad input found after parsing (e.g. a lattice too large for the chosen device): exit 2.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class InitialState { cold, hot };
enum class ModelKind { ising, potts, on, phi4 };
enum class Precision { float32, float64 };  ///< of a continuous model's field

/// What an engine needs to know; derived from the validated configuration.
struct EngineSettings {
  ModelKind model = ModelKind::ising;
  int q = 2;  ///< Potts states
  int n = 3;  ///< O(n) components
  Precision precision = Precision::float64;
  std::vector<int64_t> dims;
  double beta = 0.0;    ///< Ising, Potts, O(n)
  double kappa = 0.0;   ///< phi^4 hopping parameter
  double lambda = 0.0;  ///< phi^4 quartic coupling
  double field = 0.0;
  /// One sweep: these passes over the lattice, in order (each: colour 0, then colour 1).
  std::vector<UpdateAlgorithm> sequence{UpdateAlgorithm::metropolis};
  int hits = 1;                    ///< Metropolis proposals per site and pass (continuous models)
  double step = 1.0;               ///< initial Metropolis step size (continuous models)
  bool tune_step = true;           ///< tune the step during thermalization, then freeze it
  double target_acceptance = 0.5;  ///< of Metropolis (and MALA) proposals, when tuning
  double langevin_step = 0.1;      ///< Fourier-accelerated Langevin time step (phi^4)
  uint64_t seed = 0;
  InitialState start = InitialState::hot;
  int replicas = 1;  ///< independent chains of the same parameters, updated together
  int64_t measurement_capacity = 1024;  ///< measurements queued before collect() must run
  /// Structure factor of the order-parameter field on every k-th measurement; 0: off.
  int64_t structure_factor_every = 0;
  /// Momentum-projected time-slice correlators on every k-th measurement; 0: off.
  int64_t timeslice_every = 0;
  int timeslice_momenta_per_axis = 1;  ///< N: p = 0 and n e_a, n = 1 .. N, per spatial axis
  /// Ising: store 32 spins per word and update them together where the lattice allows
  /// (uses_packed_ising); the chain is the same either way.
  bool multispin = true;
  /// The run takes snapshots between sweeps (output.snapshot_every > 0): the packed Ising
  /// engine then keeps a lexicographic copy to stage them, so that copying overlaps sweeps.
  bool snapshots = false;
  /// Ising: snapshots (start_snapshot) are bit-packed, IsingModel::bit_packed_snapshot_format.
  bool snapshot_bits = false;
  /// The ranks of a decomposed run (issue 8): with more than one, each engine samples its box
  /// of the lattice (parallel_grid boxes per axis; empty: Decomposition chooses), and
  /// measurements, histograms and configurations are those of the whole lattice. Null: alone.
  std::shared_ptr<Communicator> communicator;
  std::vector<int> parallel_grid;
  int cpu_threads = 0;                  ///< 0: OpenMP default
  int cuda_device = 0;
  int cuda_block_size = 256;  ///< threads per block; the chain does not depend on it
};

/// Measurements moved to the host, in order: values[(k * replicas + r) * observables + o].
/// The measurements that also took the structure factor are spectral_rows (indices k), with
/// spectral_values[(j * replicas + r) * 2 + {0, 1}] = S(0), S(k_min) of the j-th of them.
struct MeasurementBatch {
  int64_t count = 0;
  std::vector<double> values;
  std::vector<int64_t> spectral_rows;
  std::vector<double> spectral_values;
  /// The measurements that took time-slice correlators, and C[(j * R + r) * T + dt][p].
  std::vector<int64_t> timeslice_rows;
  std::vector<double> timeslice_values;
};

/// Running sums of the structure factor S(k) = sum_c |phi_c(k)|^2 / V over every sample (one
/// per replica and structure-factor measurement), on the half spectrum of a real-to-complex
/// FFT of the lexicographic field (last axis L/2 + 1 modes).
struct StructureFactorSums {
  std::vector<int64_t> dims;
  int components = 0;   ///< order-parameter components summed over
  int64_t samples = 0;  ///< measurements x replicas
  std::vector<double> power_sum;       ///< sum of S(k)
  std::vector<double> power_squares;   ///< sum of S(k)^2
  std::vector<double> mean_field_sum;  ///< per component, sum of (1/V) sum_x phi_c(x)
  std::vector<int> min_axes;           ///< axes whose unit momentum enters S(k_min)
};

/// A histogram with one bin per attainable integer value; only values that occurred are kept.
struct ExactHistogram {
  std::string name;
  std::string description;
  std::map<long long, long long> counts;  ///< value -> number of samples
  long long samples = 0;
};

/// Sites of a lattice of these extents.
inline int64_t volume_of(const std::vector<int64_t>& dims) {
  int64_t v = 1;
  for (int64_t l : dims) v *= l;
  return v;
}

/// Bytes of one site's variable for a model (for memory estimates before allocating).
inline size_t site_bytes(const EngineSettings& s) {
  const size_t real = s.precision == Precision::float32 ? 4 : 8;
  switch (s.model) {
    case ModelKind::on:
      return real * static_cast<size_t>(s.n);
    case ModelKind::phi4:
      return real;
    default:
      return 1;
  }
}

/// Whether an engine of these settings keeps Ising spins multi-spin coded, 1 bit each
/// (kernels/models/ising_packed.hpp): Ising, multispin on, the last extent a multiple of 64.
inline bool uses_packed_ising(const EngineSettings& s) {
  return s.model == ModelKind::ising && s.multispin && !s.dims.empty() && s.dims.size() <= 4 &&
         packable_lattice(s.dims.data(), static_cast<int>(s.dims.size()));
}

/// Largest configuration (bytes, every replica) that the packed Ising engine stages for an
/// overlapped snapshot; larger ones are unpacked and copied a chunk at a time, synchronously.
constexpr size_t kMaxStagedSnapshotBytes = size_t(1) << 30;

/// Whether a packed Ising engine keeps a lexicographic byte copy: for spectral measurements,
/// and for overlapped snapshots of lattices up to kMaxStagedSnapshotBytes.
inline bool packed_keeps_lexicographic(const EngineSettings& s) {
  size_t sites = static_cast<size_t>(s.replicas);
  for (int64_t l : s.dims) sites *= static_cast<size_t>(l);
  return s.structure_factor_every > 0 || s.timeslice_every > 0 ||
         (s.snapshots && !s.snapshot_bits && sites <= kMaxStagedSnapshotBytes);
}

/// The most bytes of one replica's queued measurement record, of any model.
constexpr size_t kMaxMeasurementBytes = 128;

/// Bytes of the packed engine's bounded buffer for conversions to and from lexicographic bytes.
constexpr size_t kPackedChunkBytes = size_t(1) << 24;

/// Bytes of the spectral measurements' buffers: the order-parameter field (up to 4 components,
/// double) and its half spectrum.
inline size_t spectral_bytes(const EngineSettings& s) {
  const size_t sites = static_cast<size_t>(s.replicas) * static_cast<size_t>(volume_of(s.dims));
  size_t bytes = 0;
  if (s.structure_factor_every > 0 || s.timeslice_every > 0) bytes += sites * 4 * 8;
  if (s.structure_factor_every > 0) bytes += sites * 4 * 16;
  return bytes;
}

/// Bytes an engine of these settings allocates on its backend (spins and their lexicographic
/// copy, per-site acceptance counts, queued measurements, the spectral and Langevin buffers,
/// scratch), so a lattice that would not fit is refused before anything is allocated.
inline size_t engine_bytes(const EngineSettings& s) {
  size_t volume = 1;
  for (int64_t l : s.dims) volume *= static_cast<size_t>(l);
  const size_t sites = volume * static_cast<size_t>(s.replicas);
  size_t bytes =
      static_cast<size_t>(s.measurement_capacity) * s.replicas * kMaxMeasurementBytes +
      (size_t(1) << 22);
  if (uses_packed_ising(s)) {
    // Packed spins, the conversion buffer and, for spectral measurements or staged
    // snapshots, a byte copy.
    bytes += sites / 8 + kPackedChunkBytes + (packed_keeps_lexicographic(s) ? sites : 0);
  } else {
    bytes += sites * (2 * site_bytes(s) + 1);
  }
  // Bit-packed snapshots: their staging copy (or a chunk at a time).
  if (s.snapshot_bits) bytes += sites / 8 <= kMaxStagedSnapshotBytes ? sites / 8 : kPackedChunkBytes;
  bytes += spectral_bytes(s);
  // Fourier-accelerated Langevin: the proposal, two double fields, two spectra, 1 / M'(k).
  for (UpdateAlgorithm a : s.sequence) {
    if (is_whole_lattice(a)) {
      bytes += sites * (site_bytes(s) + 2 * 8 + 2 * 16) + volume * 8;
      break;
    }
  }
  return bytes;
}

/// The Metropolis step and its acceptance, for models with a continuous proposal, and the
/// parameters of Fourier-accelerated Langevin passes.
struct StepTuning {
  bool applies = false;      ///< the model has a tunable step and the sequence a Metropolis pass
  double step = 0.0;         ///< the step in use (frozen after thermalization)
  double acceptance = -1.0;  ///< over the last block of thermalization sweeps; -1: not measured
  bool langevin = false;     ///< the sequence has a langevin or mala pass
  bool adjusted = false;     ///< ... and it is Metropolis-adjusted (mala)
  double langevin_step = 0.0;         ///< epsilon in use (tuned for mala, then frozen)
  double langevin_shift = 0.0;        ///< shift of the free kernel (see sim/fourier_langevin.hpp)
  double langevin_acceptance = -1.0;  ///< mala: over the last block of thermalization sweeps
};

/// Everything an engine needs to continue its chain exactly where it was (checkpoints): with
/// the counter-based random numbers no generator state is needed.
struct EngineState {
  std::vector<unsigned char> configuration;  ///< every replica, lexicographic, snapshot format
  std::vector<ExactHistogram> histograms;
  StructureFactorSums structure_factor;  ///< samples = 0 when not measured
  int64_t measurements = 0;              ///< taken so far (sets the spectral measurements' cadence)
  StepTuning tuning;                     ///< steps, kernel shift and acceptances in use
  bool langevin_shift_set = false;       ///< whether the shift was estimated yet
};

/// A Markov chain (or several replicas of it) on one backend. Sweep indices are global: sweep
/// k always uses the random numbers of sweep k, whoever runs it, so chains do not depend on
/// how the sweeps are cut into calls.
class Engine {
 public:
  virtual ~Engine() = default;
  /// Sets the configuration at sweep 0.
  virtual void initialize() = 0;
  /// Performs sweeps first, first+1, ..., first+count-1 (each: the update sequence's passes).
  virtual void sweep(uint64_t first, uint64_t count) = 0;
  /// Thermalization sweeps: like sweep(), but also measures the Metropolis acceptance and, when
  /// tuning is on, rescales the step towards the target acceptance afterwards. Counting does
  /// not touch random numbers, so only the step size differs from sweep().
  virtual void thermalization_sweep(uint64_t first, uint64_t count) = 0;
  virtual StepTuning step_tuning() const = 0;
  /// Names of the per-site observables each measurement yields per replica, in order.
  virtual std::vector<std::string> observable_names() const = 0;
  virtual std::vector<std::string> observable_descriptions() const = 0;
  /// Queues a measurement of every replica (on the GPU without waiting for it).
  /// Precondition: queued() < settings.measurement_capacity.
  virtual void measure() = 0;
  /// sweep(first, count), then measure(): the same chain and measurement, but an engine may
  /// take the measurement within the last pass (the packed Ising engine does).
  virtual void sweep_and_measure(uint64_t first, uint64_t count) {
    sweep(first, count);
    measure();
  }
  virtual int64_t queued() const = 0;
  /// Moves the queued measurements into `out` (replacing its contents) and into histograms().
  virtual void collect(MeasurementBatch& out) = 0;
  /// The structure factor's running sums; false when the run does not measure it.
  virtual bool structure_factor(StructureFactorSums& out) = 0;
  /// Exact histograms of everything collected so far.
  virtual const std::vector<ExactHistogram>& histograms() const = 0;
  /// Copies every replica's configuration in lexicographic order into out
  /// (replicas() * volume() sites, replica-major, each snapshot_format().components values).
  virtual void configuration(void* out) = 0;
  virtual SnapshotFormat snapshot_format() const = 0;
  /// Host buffers for snapshots in flight.
  static constexpr int kSnapshotSlots = 2;
  /// Starts copying the configuration (as configuration() gives it, or bit-packed with
  /// EngineSettings::snapshot_bits) into host buffer `slot` (< kSnapshotSlots) and returns:
  /// the copy overlaps the sweeps queued after it.
  virtual void start_snapshot(int slot) = 0;
  /// Waits for start_snapshot(slot)'s copy and returns it, valid until the next
  /// start_snapshot(slot). It touches nothing else, so another thread may call it while this
  /// one queues sweeps.
  virtual const void* snapshot_data(int slot) = 0;
  /// The state after the sweeps so far. Precondition: queued() == 0 (collect() first).
  virtual EngineState state() = 0;
  /// Continues from a state() of an engine of the same settings (either backend), instead of
  /// initialize().
  virtual void restore(const EngineState& state) = 0;
  virtual int replicas() const = 0;
  virtual int64_t volume() const = 0;
  virtual std::string backend_name() const = 0;  ///< "cpu" or "cuda"
  virtual std::string device_name() const = 0;
  virtual void synchronize() = 0;
  /// Seconds that sweeps first .. first+count-1 take on the backend (CUDA events on the GPU),
  /// for benchmarks; the chain advances as with sweep().
  virtual double timed_sweeps(uint64_t first, uint64_t count) = 0;
};

/// The CPU reference engine.
std::unique_ptr<Engine> make_cpu_engine(const EngineSettings& settings);

/// Number of usable CUDA devices; when 0, `reason` says why (no toolkit, no driver, ...).
int cuda_device_count(std::string& reason);

/// Device-to-device copy bandwidth (bytes read plus written per second) of CUDA device
/// `device`, the median of `repeats` copies of `bytes`.
double cuda_copy_bandwidth(int device, size_t bytes, int repeats);

/// The CUDA engine. Throws InputError when the lattice does not fit in device memory.
std::unique_ptr<Engine> make_cuda_engine(const EngineSettings& settings);

}  // namespace lattica

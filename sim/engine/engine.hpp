#pragma once
// The run loop's view of a sampler: plain types only, so .cu files can include it without
// the configuration or output libraries.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kernels/models/lattice_model.hpp"
#include "sim/engine/memory.hpp"
#include "sim/engine/settings.hpp"

namespace lattica {

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
  /// Tempered runs: values are in rung order (replica index l * rungs + k: ladder l, rung k);
  /// replica_rungs[k * replicas + slot] is the rung of each configuration slot, and
  /// log_weights[(k * replicas + i) * rungs + j] ln of the Boltzmann weight of the
  /// configuration at rung-ordered index i under rung j's couplings (for reweighting).
  std::vector<int32_t> replica_rungs;
  std::vector<double> log_weights;
};

/// Running sums of the structure factor S(k) = sum_c |phi_c(k)|^2 / V over every sample (one
/// per replica and structure-factor measurement), on the half spectrum of a real-to-complex
/// FFT of the lexicographic field (last axis L/2 + 1 modes). One process holds every row of
/// axis 0 of the spectrum; a rank of a decomposed run only its own rows (those of SlabFft).
struct StructureFactorSums {
  std::vector<int64_t> dims;
  int components = 0;                  ///< order-parameter components summed over
  int64_t samples = 0;                 ///< measurements x replicas
  int64_t first_row = 0;               ///< the first row of axis 0 in power_sum, power_squares
  std::vector<double> power_sum;       ///< sum of S(k), rows first_row .. of the half spectrum
  std::vector<double> power_squares;   ///< sum of S(k)^2, the same rows
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

/// The Metropolis step and its acceptance, for models with a continuous proposal, and the
/// parameters of Fourier-accelerated Langevin passes.
struct StepTuning {
  bool applies = false;         ///< the model has a tunable step and the sequence a Metropolis pass
  double step = 0.0;            ///< the step in use (frozen after thermalization)
  double acceptance = -1.0;     ///< over the last block of thermalization sweeps; -1: not measured
  bool langevin = false;        ///< the sequence has a langevin or mala pass
  bool adjusted = false;        ///< ... and it is Metropolis-adjusted (mala)
  double langevin_step = 0.0;   ///< epsilon in use (tuned for mala, then frozen)
  double langevin_shift = 0.0;  ///< shift of the free kernel (see sim/engine/fourier_langevin.hpp)
  double langevin_acceptance = -1.0;  ///< mala: over the last block of thermalization sweeps
};

/// Parallel tempering's permutation and statistics (all empty without tempering). Slot
/// l * rungs + i of ladder l holds one configuration; its rung changes when exchanges swap
/// couplings. A round trip is a configuration's way from the bottom rung (0) to the top one and
/// back; `direction` labels it for the round trips and the ladder feedback (Katzgraber et al.).
struct TemperingState {
  int rungs = 0;
  std::vector<int32_t> rung_of_slot;       ///< [slot]
  std::vector<int8_t> direction;           ///< [slot]: +1 from the bottom, -1 from the top, 0
  std::vector<int64_t> bottom_sweep;       ///< [slot]: when it last left the bottom rung
  std::vector<int64_t> attempts, accepts;  ///< [pair (k, k + 1)], summed over ladders
  std::vector<int64_t> round_trip_sweeps;  ///< each completed round trip's length in sweeps
  std::vector<int64_t> up_visits;          ///< [rung]: exchange rounds it held a +1 slot
  std::vector<int64_t> down_visits;        ///< [rung]: ... a -1 slot
  /// Feedback-optimised ladder (tempering.feedback > 0; else all empty): the tempered
  /// coupling of every rung now, and the f(k) each feedback step used and the ladder it made,
  /// [step][rung] flattened.
  std::vector<double> ladder;
  std::vector<double> feedback_up_fraction, feedback_ladders;
};

/// Everything an engine needs to continue its chain exactly where it was (checkpoints): with
/// the counter-based random numbers no generator state is needed.
struct EngineState {
  std::vector<unsigned char> configuration;  ///< every replica, lexicographic, snapshot format
  /// Decomposed runs: `configuration` holds only the sites whose coordinates x_a are
  /// region_origin[a] + i_a (modulo the lattice) for i_a < region_extents[a], lexicographic over
  /// the region, every replica; empty: the whole lattice. state() gives this rank's box interior;
  /// restore() takes the whole lattice or this rank's box with its ghost layers (the storage).
  std::vector<int64_t> region_origin, region_extents;
  std::vector<ExactHistogram> histograms;
  StructureFactorSums structure_factor;  ///< samples = 0 when not measured
  int64_t measurements = 0;              ///< taken so far (sets the spectral measurements' cadence)
  StepTuning tuning;                     ///< steps, kernel shift and acceptances in use
  bool langevin_shift_set = false;       ///< whether the shift was estimated yet
  TemperingState tempering;              ///< rungs = 0 without tempering
};

/// One box of a decomposed configuration on its way to rank 0's output: the sites x_a =
/// origin[a] + i_a, i_a < extents[a], of every replica (replica-major, lexicographic over the
/// box), in the snapshot format (EngineSettings::snapshot_bits: 8 sites of the last axis a byte).
using SnapshotBox = std::function<void(const std::vector<int64_t>& origin,
                                       const std::vector<int64_t>& extents, const void* data)>;

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
  /// Whether snapshots go to rank 0 a box at a time (stream_snapshot(), a decomposed engine)
  /// instead of through start_snapshot().
  virtual bool streams_snapshots() const { return false; }
  /// Sends every rank's box of the configuration to rank 0 in turn (collective), which calls
  /// `box` for each, its own first; only one box is in rank 0's memory at a time.
  virtual void stream_snapshot(const SnapshotBox& /*box*/) {}
  /// Calls `box` once with this rank's own box of the configuration, as stream_snapshot() gives
  /// it, for snapshots that every rank writes itself (parallel HDF5). Not collective.
  /// Precondition: streams_snapshots().
  virtual void own_snapshot_box(const SnapshotBox& /*box*/) {}
  /// The state after the sweeps so far. Precondition: queued() == 0 (collect() first).
  virtual EngineState state() = 0;
  /// Continues from a state() of an engine of the same settings (either backend), instead of
  /// initialize().
  virtual void restore(const EngineState& state) = 0;
  virtual int replicas() const = 0;
  /// Parallel tempering's permutation and statistics so far (rungs = 0 when not tempered).
  virtual TemperingState tempering() const { return {}; }
  /// Population annealing (models with an inverse temperature, not tempered, not decomposed):
  /// every replica samples at `beta` from the next sweep on (other couplings unchanged).
  virtual void set_beta(double beta) = 0;
  /// Population annealing: out[r] = ln of replica r's Boltzmann weight at `beta` over its weight
  /// at the couplings in use, -(beta - beta_now) E_r, from the configuration's exact sums.
  virtual void log_weight_changes(double beta, std::vector<double>& out) = 0;
  /// Population annealing: replica r becomes a copy of replica source[r] (each in [0,
  /// replicas())), all of them at once, by a gather on the backend.
  virtual void gather_replicas(const std::vector<int32_t>& source) = 0;
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

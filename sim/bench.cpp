#include "sim/bench.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>

#include "sim/background_writer.hpp"
#include "sim/decomposition.hpp"
#include "sim/engine/engine.hpp"
#include "sim/output.hpp"
#include "sim/run/annealing.hpp"
#include "sim/run/snapshot_sink.hpp"
#include "sim/version.hpp"

namespace lattica {

namespace {

struct KernelCase {
  std::string name;                       ///< e.g. "metropolis"
  std::vector<UpdateAlgorithm> sequence;  ///< one pass
  Precision precision;
  bool multispin = false;  ///< Ising: the multi-spin-coded kernel (1 bit per spin)
  bool cluster = false;    ///< a cluster move, timed at its own default size
  int replicas = 1;        ///< replicas updated together (ensemble cases: kEnsembleReplicas)
  bool tempered = false;   ///< the replicas are the rungs of a parallel-tempering ladder
  int exchange_every = 1;  ///< tempered: sweeps between exchange rounds
};

/// Ensemble cases: a ladder of this many rungs, against as many untempered replicas.
constexpr int kEnsembleReplicas = 64;
/// A tempered case's exchange_every that no benchmark reaches: the ladder without its rounds.
constexpr int kNeverExchange = 1 << 30;

struct Result {
  KernelCase kernel;
  std::vector<int64_t> dims;
  double seconds_per_sweep = 0;
  double site_updates_per_ns = 0;
  double bytes_per_site = 0;  ///< the least a sweep must move per site: read and write it once
  double gigabytes_per_second = 0;
  double percent_of_copy = 0;
  double cpu_site_updates_per_ns = 0;
  std::vector<int64_t> cpu_dims;
};

std::vector<KernelCase> kernels_of(const BenchOptions& o) {
  using A = UpdateAlgorithm;
  std::vector<std::pair<std::string, A>> algorithms;
  if (o.model == "ising" || o.model == "potts") {
    algorithms = {{"metropolis", A::metropolis}, {"heatbath", A::heatbath}};
  } else if (o.model == "on") {
    algorithms = {{"metropolis", A::metropolis},
                  {"heatbath", A::heatbath},
                  {"overrelaxation", A::overrelaxation}};
  } else {
    algorithms = {{"metropolis", A::metropolis},
                  {"overrelaxation", A::overrelaxation},
                  {"langevin", A::langevin},
                  {"mala", A::mala}};
  }
  std::vector<KernelCase> out;
  const bool continuous = o.model == "on" || o.model == "phi4";
  for (Precision p : continuous ? std::vector<Precision>{Precision::float32, Precision::float64}
                                : std::vector<Precision>{Precision::float64}) {
    for (const auto& [name, a] : algorithms) out.push_back({name, {a}, p});
  }
  if (o.model == "ising") {
    for (const auto& [name, a] : algorithms) {
      out.push_back({name + " multispin", {a}, Precision::float64, true});
    }
  }
  // Cluster moves: one pass is a whole-lattice labelling (wolff: of one cluster).
  for (Precision p : continuous ? std::vector<Precision>{Precision::float32}
                                : std::vector<Precision>{Precision::float64}) {
    out.push_back({"swendsen_wang", {A::swendsen_wang}, p, false, true});
    out.push_back({"wolff", {A::wolff}, p, false, true});
  }
  if (o.model == "ising") {
    out.push_back({"swendsen_wang multispin", {A::swendsen_wang}, Precision::float64, true, true});
  }
  // Parallel tempering: a ladder of kEnsembleReplicas rungs exchanging every sweep, every 10 or
  // never (within the timed sweeps), and as many untempered replicas of the same lattice: what
  // the rounds add is the difference to the ladder without exchanges, what the per-replica
  // couplings add that ladder's difference to the untempered replicas. Byte storage for Ising
  // too: a tempered run keeps its per-replica couplings there.
  const Precision first = continuous ? Precision::float32 : Precision::float64;
  out.push_back({"metropolis replicas", {A::metropolis}, first, false, false, kEnsembleReplicas});
  const auto ladder = [&](const char* name, int exchange_every) {
    out.push_back(
        {name, {A::metropolis}, first, false, false, kEnsembleReplicas, true, exchange_every});
  };
  ladder("metropolis tempering", 1);
  ladder("metropolis tempering every 10", 10);
  ladder("metropolis tempering without exchanges", kNeverExchange);
  // --kernel and --precision pick some (to time, or profile, one kernel alone).
  const auto unwanted = [&](const KernelCase& k) {
    const bool precision_differs = continuous && !o.precision.empty() &&
                                   (o.precision == "float") != (k.precision == Precision::float32);
    return (!o.kernel.empty() && k.name != o.kernel) || precision_differs;
  };
  out.erase(std::remove_if(out.begin(), out.end(), unwanted), out.end());
  return out;
}

/// Names of every kernel of the options' model, for the error of a --kernel that matches none.
std::string kernel_names(BenchOptions o) {
  o.kernel.clear();
  o.precision.clear();
  std::string names;
  for (const KernelCase& k : kernels_of(o)) {
    if (names.find("\"" + k.name + "\"") == std::string::npos)
      names += (names.empty() ? "\"" : ", \"") + k.name + "\"";
  }
  return names;
}

EngineSettings settings_for(const BenchOptions& o, const KernelCase& k,
                            const std::vector<int64_t>& dims) {
  EngineSettings s;
  s.model = o.model == "potts"  ? ModelKind::potts
            : o.model == "on"   ? ModelKind::on
            : o.model == "phi4" ? ModelKind::phi4
                                : ModelKind::ising;
  s.q = o.q;
  s.n = o.n;
  s.precision = k.precision;
  s.dims = dims;
  // Couplings at or near each model's transition, where the physics is hardest.
  s.beta = o.model == "ising"   ? (dims.size() == 2 ? 0.4406868 : 0.2216544)
           : o.model == "potts" ? 1.0050
           : o.model == "on"    ? (o.n == 2   ? 0.4541
                                   : o.n == 3 ? 0.6930
                                              : 0.9360)
                                : 0.0;
  s.kappa = 0.1875483;
  s.lambda = 1.1;
  s.sequence = k.sequence;
  s.multispin = k.multispin;
  s.replicas = k.replicas;
  if (k.tempered) {  // rungs spread around the coupling above
    std::vector<double>& ladder = o.model == "phi4" ? s.tempering.kappa : s.tempering.beta;
    const double middle = o.model == "phi4" ? s.kappa : s.beta;
    for (int r = 0; r < k.replicas; ++r) {
      ladder.push_back(middle * (0.9 + 0.2 * r / (k.replicas - 1)));
    }
    s.tempering.exchange_every = k.exchange_every;
  }
  s.langevin_step = 0.02;
  s.seed = 2026;
  s.cuda_device = o.device;
  s.measurement_capacity = 1;
  return s;
}

/// The slowest rank's `seconds` (collective over `ranks`; this process's without them).
double slowest_rank(double seconds, Communicator* ranks) {
  if (!ranks) return seconds;
  return 1e-9 * static_cast<double>(ranks->max(static_cast<int64_t>(seconds * 1e9)));
}

/// The median of timings (at least one).
double median(std::vector<double> times) {
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

/// Median seconds per sweep of `engine`, after warm-up; sweeps per repeat chosen so a repeat
/// takes about 0.2 s. A decomposed engine's `ranks` run the same sweeps, and each time is the
/// slowest rank's.
double seconds_per_sweep(Engine& engine, int repeats, Communicator* ranks = nullptr) {
  auto slowest = [&](double seconds) { return slowest_rank(seconds, ranks); };
  engine.initialize();
  uint64_t sweep = 0;
  engine.timed_sweeps(sweep++, 1);  // warm-up
  const double one = std::max(slowest(engine.timed_sweeps(sweep++, 1)), 1e-7);
  const auto count = static_cast<uint64_t>(std::clamp(0.2 / one, 1.0, 2000.0));
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r) {
    times.push_back(slowest(engine.timed_sweeps(sweep, count)) / static_cast<double>(count));
    sweep += count;
  }
  return median(times);
}

/// Structure-factor measurements timed together, at most (the engine's queue holds them).
constexpr int kSpectraPerCollect = 64;

/// Seconds of one structure-factor measurement (the field, its moves to the slabs, the
/// distributed or single-process FFT and the power sums), the slowest rank's, median of
/// `repeats`; the engine measures the structure factor at every measurement.
double seconds_per_spectrum(Engine& engine, int repeats, Communicator* ranks) {
  MeasurementBatch batch;
  auto timed = [&](int count) {
    if (ranks) ranks->max(0);  // start together
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < count; ++i) engine.measure();
    engine.collect(batch);  // waits for the device
    return slowest_rank(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), ranks);
  };
  engine.initialize();
  timed(1);  // warm-up: plans, buffers
  const double one = std::max(timed(1), 1e-7);
  const int count = static_cast<int>(std::clamp(0.2 / one, 1.0, double(kSpectraPerCollect)));
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r) times.push_back(timed(count) / count);
  return median(times);
}

/// Seconds of one snapshot frame of the engine's configuration written into an HDF5 output as
/// a run writes it (SnapshotSink: decomposed, every rank its box collectively with parallel
/// HDF5, else through rank 0), the slowest rank's, median of `repeats`. Rank 0 writes the file
/// `path` and removes it afterwards; `box`: a decomposed run's box extents (chunks follow it).
double seconds_per_snapshot(Engine& engine, const std::vector<int64_t>& dims,
                            const std::vector<int64_t>& box, const std::string& path, int repeats,
                            Communicator* ranks) {
  engine.initialize();
  RunMetadata m;
  m.dims = dims;
  m.snapshot = engine.snapshot_format();
  m.snapshot_box = box;
  m.replicas = engine.replicas();
  m.backend = engine.backend_name();
  m.device = engine.device_name();
  const bool root = !ranks || ranks->rank() == 0;
  std::unique_ptr<OutputFile> output;
  if (root)
    output = std::make_unique<OutputFile>(path, true, m, engine.observable_names(),
                                          std::vector<std::string>{});
  std::vector<double> times;
  {
    BackgroundWriter writer;
    SnapshotSink sink(engine, output.get(), writer, dims, ranks);
    auto timed = [&](int64_t sweep) {
      if (ranks) ranks->max(0);  // start together
      const auto start = std::chrono::steady_clock::now();
      sink.take(sweep);
      writer.drain();  // one process: the frame's append runs on the writer thread
      return slowest_rank(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), ranks);
    };
    timed(0);  // warm-up: the file's first chunks, MPI-IO's first open
    for (int r = 0; r < repeats; ++r) times.push_back(timed(r + 1));
  }
  if (output) {
    output->close();
    std::remove(path.c_str());
  }
  return median(times);
}

/// Population annealing's pass of the benchmark: a short schedule from beta = 0 to the
/// transition on many small lattices, timed whole (sweeps, measurements, resampling).
struct AnnealingRate {
  std::vector<int64_t> dims;
  int replicas = 0;
  int64_t steps = 0, sweeps_per_step = 0;
  double site_updates_per_ns = 0;  ///< replica-site updates of the whole run per ns
  double resampling_share = 0;     ///< of the time: weights, plan and gather
};

/// Runs 21 steps of 5 sweeps from beta = 0 to s.beta on an engine of settings `s`.
AnnealingRate annealing_rate(const EngineSettings& s, bool cuda) {
  AnnealingSettings a;
  constexpr int kSteps = 20;
  for (int k = 0; k <= kSteps; ++k) a.betas.push_back(s.beta * k / kSteps);
  a.sweeps = 5;
  a.seed = s.seed;
  a.log_z0_per_site = log_z0_per_site(s);
  std::unique_ptr<Engine> engine = cuda ? make_cuda_engine(s) : make_cpu_engine(s);
  double seconds = 0.0, resampling = 0.0;
  int64_t sweeps = 0;
  run_population_annealing(*engine, a, [&](const AnnealingStep& step) {
    seconds += step.step_seconds;
    resampling += step.resampling_seconds;
    sweeps = step.sweeps_done;
  });
  AnnealingRate r;
  r.dims = s.dims;
  r.replicas = s.replicas;
  r.steps = kSteps + 1;
  r.sweeps_per_step = a.sweeps;
  r.site_updates_per_ns = static_cast<double>(s.replicas) * static_cast<double>(volume_of(s.dims)) *
                          static_cast<double>(sweeps) / (seconds * 1e9);
  r.resampling_share = resampling / seconds;
  return r;
}

/// The type of the site variable: int8 (Ising), uint8 (Potts), float or double.
std::string type_name(const BenchOptions& o, const KernelCase& k) {
  if (o.model == "ising") return k.multispin ? "1 bit" : "int8";
  if (o.model == "potts") return "uint8";
  return k.precision == Precision::float32 ? "float" : "double";
}

std::string dims_text(const std::vector<int64_t>& dims) {
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "x" : "") + std::to_string(dims[i]);
  return s;
}

/// The CPU comparison's lattice: the GPU lattice's dimension at a size a core sweeps in well
/// under a second (the last extent a multiple of 64, so multi-spin Ising applies).
std::vector<int64_t> cpu_lattice_like(const std::vector<int64_t>& gpu_dims) {
  switch (gpu_dims.size()) {
    case 1:
      return {1 << 20};
    case 2:
      return {1024, 1024};
    case 3:
      return {64, 64, 64};
    default:
      return {16, 16, 16, 64};
  }
}

void write_json(const std::string& path, const std::string& device, double copy,
                const BenchOptions& o, const std::vector<Result>& results,
                const std::vector<AnnealingRate>& annealing) {
  std::ofstream out(path);
  out << "{\n  \"program\": \"sim bench\",\n  \"version\": \"" << kLatticaVersion << " ("
      << kLatticaGitCommit << ")\",\n  \"device\": \"" << device
      << "\",\n  \"copy_bandwidth_gb_per_s\": " << copy / 1e9 << ",\n  \"model\": \"" << o.model
      << "\",\n  \"repeats\": " << o.repeats << ",\n  \"kernels\": [\n";
  for (size_t i = 0; i < results.size(); ++i) {
    const Result& r = results[i];
    out << "    {\"kernel\": \"" << r.kernel.name << "\", \"type\": \"" << type_name(o, r.kernel)
        << "\", \"lattice\": \"" << dims_text(r.dims) << "\", \"replicas\": " << r.kernel.replicas
        << ", \"tempering_rungs\": " << (r.kernel.tempered ? r.kernel.replicas : 0)
        << ", \"exchange_every\": " << (r.kernel.tempered ? r.kernel.exchange_every : 0)
        << ", \"seconds_per_sweep\": " << r.seconds_per_sweep
        << ", \"site_updates_per_ns\": " << r.site_updates_per_ns
        << ", \"bytes_per_site_update\": " << r.bytes_per_site
        << ", \"gb_per_s\": " << r.gigabytes_per_second
        << ", \"percent_of_copy\": " << r.percent_of_copy << ", \"cpu_lattice\": \""
        << dims_text(r.cpu_dims) << "\", \"cpu_site_updates_per_ns\": " << r.cpu_site_updates_per_ns
        << "}" << (i + 1 < results.size() ? "," : "") << "\n";
  }
  out << "  ],\n  \"annealing\": [\n";
  for (size_t i = 0; i < annealing.size(); ++i) {
    const AnnealingRate& a = annealing[i];
    out << "    {\"backend\": \"" << (i == 0 ? "cuda" : "cpu") << "\", \"lattice\": \""
        << dims_text(a.dims) << "\", \"replicas\": " << a.replicas << ", \"steps\": " << a.steps
        << ", \"sweeps_per_step\": " << a.sweeps_per_step
        << ", \"site_updates_per_ns\": " << a.site_updates_per_ns
        << ", \"resampling_share\": " << a.resampling_share << "}"
        << (i + 1 < annealing.size() ? "," : "") << "\n";
  }
  out << "  ]\n}\n";
  if (!out) throw std::runtime_error("cannot write " + path);
}

struct ScalingPoint {
  int ranks = 0;
  std::vector<int> grid;
  std::vector<int64_t> dims;
  double seconds_per_sweep = 0;
  double site_updates_per_ns = 0;  ///< of all ranks together
  double per_rank = 0;             ///< site updates per ns per rank
  double efficiency = 0;           ///< per_rank over one rank's
};

/// Weak scaling (a box of o.dims per rank, stacked along axis 0) or strong scaling (the lattice
/// o.dims, grid chosen for the ranks) over 1, 2, 4, ... ranks and all of them.
int run_scaling(const BenchOptions& o, Communicator& world) {
  const bool root = world.rank() == 0;
  const bool weak = o.scaling == "weak";
  // "structure factor": a measurement through the distributed FFT instead of an update sweep;
  // "snapshot": a frame written to an HDF5 file.
  const bool spectral = o.kernel == kStructureFactorStep, snapshot = o.kernel == kSnapshotStep;
  BenchOptions chosen = o;
  if (spectral || snapshot) chosen.kernel.clear();
  if (chosen.kernel.empty())
    chosen.kernel = o.model == "ising" ? "metropolis multispin" : "metropolis";
  if (chosen.precision.empty()) chosen.precision = "float";
  const std::vector<KernelCase> kernels = kernels_of(chosen);
  if (kernels.empty()) {
    if (root)
      std::fprintf(stderr, "sim bench: error: --kernel \"%s\": the %s model's kernels are %s\n",
                   chosen.kernel.c_str(), o.model.c_str(), kernel_names(o).c_str());
    return 2;
  }
  const KernelCase& k = kernels.front();
  const bool ising = o.model == "ising";
  const std::vector<int64_t> dims = !o.dims.empty() ? o.dims
                                    : weak ? (ising ? std::vector<int64_t>{1024, 1024, 1024}
                                                    : std::vector<int64_t>{512, 512, 512})
                                           : (ising ? std::vector<int64_t>{2048, 2048, 2048}
                                                    : std::vector<int64_t>{1024, 1024, 1024});
  std::string reason;
  const int devices = o.backend == "cuda" ? cuda_device_count(reason) : 0;
  if (o.backend == "cuda" && world.max(devices == 0 ? 1 : 0) != 0) {
    if (root) std::fprintf(stderr, "sim bench: error: %s; use --backend cpu\n", reason.c_str());
    return 2;
  }
  const int device = o.backend == "cuda" ? (o.device + world.local_rank()) % devices : 0;
  const double copy = o.backend == "cuda" ? cuda_copy_bandwidth(device, size_t(1) << 30, 20) : 0;
  std::vector<int> counts;
  for (int n = 1; n < world.size(); n *= 2) counts.push_back(n);
  counts.push_back(world.size());
  std::vector<ScalingPoint> points;
  std::string device_name;
  for (int n : counts) {
    std::shared_ptr<Communicator> part = world.split(world.rank() < n ? 0 : -1);
    ScalingPoint p;
    bool failed = false;
    p.ranks = n;
    p.dims = dims;
    if (weak) p.dims[0] *= n;
    if (part) {
      EngineSettings s = settings_for(o, k, p.dims);
      s.communicator = n > 1 ? part : nullptr;
      if (weak) {
        s.parallel_grid.assign(dims.size(), 1);
        s.parallel_grid[0] = n;
      }
      s.cuda_device = device;
      if (spectral) {
        s.structure_factor_every = 1;
        s.measurement_capacity = kSpectraPerCollect;
      }
      try {
        p.grid = n > 1 ? Decomposition(s.dims, s.parallel_grid, n).grid()
                       : std::vector<int>(dims.size(), 1);
        std::unique_ptr<Engine> engine =
            o.backend == "cuda" ? make_cuda_engine(s) : make_cpu_engine(s);
        device_name = engine->device_name();
        if (spectral) {
          p.seconds_per_sweep = seconds_per_spectrum(*engine, o.repeats, part.get());
        } else if (snapshot) {
          const std::vector<int64_t> box =
              n > 1 ? Decomposition(s.dims, s.parallel_grid, n).box() : std::vector<int64_t>{};
          p.seconds_per_sweep = seconds_per_snapshot(*engine, p.dims, box, kSnapshotFile, o.repeats,
                                                     n > 1 ? part.get() : nullptr);
        } else {
          p.seconds_per_sweep = seconds_per_sweep(*engine, o.repeats, part.get());
        }
      } catch (const InputError& e) {
        if (root)
          std::fprintf(stderr, "sim bench: error: %d rank(s), %s: %s\n", n,
                       dims_text(p.dims).c_str(), e.what());
        failed = true;
      }
    }
    if (world.max(failed ? 1 : 0) != 0) return 2;
    if (part) {
      p.site_updates_per_ns = static_cast<double>(volume_of(p.dims)) / (p.seconds_per_sweep * 1e9);
      p.per_rank = p.site_updates_per_ns / n;
      p.efficiency = points.empty() ? 1.0 : p.per_rank / points.front().per_rank;
    }
    points.push_back(p);
  }
  if (!root) return 0;
  const std::string step = spectral ? kStructureFactorStep : snapshot ? kSnapshotStep : k.name;
  const char* per = spectral ? "s/spectrum" : snapshot ? "s/frame" : "s/sweep";
  std::printf("sim bench: %s scaling, %s %s (%s), %s; one rank's copy bandwidth %.1f GB/s\n",
              o.scaling.c_str(), o.model.c_str(), step.c_str(), type_name(o, k).c_str(),
              device_name.c_str(), copy / 1e9);
  std::printf("%6s %-12s %-16s %14s %14s %14s %10s\n", "ranks", "grid", "lattice", per,
              spectral || snapshot ? "sites/ns" : "updates/ns", "per rank", "efficiency");
  for (const ScalingPoint& p : points) {
    std::printf("%6d %-12s %-16s %14.6g %14.2f %14.2f %9.1f%%\n", p.ranks,
                grid_text(p.grid).c_str(), dims_text(p.dims).c_str(), p.seconds_per_sweep,
                p.site_updates_per_ns, p.per_rank, 100 * p.efficiency);
  }
  if (!o.json_path.empty()) {
    std::ofstream out(o.json_path);
    out << "{\n  \"program\": \"sim bench --scaling\",\n  \"version\": \"" << kLatticaVersion
        << " (" << kLatticaGitCommit << ")\",\n  \"scaling\": \"" << o.scaling
        << "\",\n  \"backend\": \"" << o.backend << "\",\n  \"device\": \"" << device_name
        << "\",\n  \"copy_bandwidth_gb_per_s\": " << copy / 1e9 << ",\n  \"model\": \"" << o.model
        << "\",\n  \"kernel\": \"" << step << "\",\n  \"type\": \"" << type_name(o, k)
        << "\",\n  \"repeats\": " << o.repeats << ",\n  \"points\": [\n";
    for (size_t i = 0; i < points.size(); ++i) {
      const ScalingPoint& p = points[i];
      out << "    {\"ranks\": " << p.ranks << ", \"grid\": \"" << grid_text(p.grid)
          << "\", \"lattice\": \"" << dims_text(p.dims) << "\", \""
          << (spectral   ? "seconds_per_spectrum"
              : snapshot ? "seconds_per_frame"
                         : "seconds_per_sweep")
          << "\": " << p.seconds_per_sweep << ", \"site_updates_per_ns\": " << p.site_updates_per_ns
          << ", \"per_rank\": " << p.per_rank << ", \"efficiency\": " << p.efficiency << "}"
          << (i + 1 < points.size() ? "," : "") << "\n";
    }
    out << "  ]\n}\n";
    if (!out) throw std::runtime_error("cannot write " + o.json_path);
  }
  return 0;
}

}  // namespace

/// The exchange rounds' share of a tempered sweep, against the same ladder without rounds, and
/// the per-replica couplings' share of that, against untempered replicas, from the cases that
/// ran.
void print_tempering_overhead(const std::vector<Result>& results) {
  const Result* plain = nullptr;
  const Result* ladder = nullptr;
  for (const Result& r : results) {
    if (r.kernel.replicas > 1 && !r.kernel.tempered) plain = &r;
    if (r.kernel.tempered && r.kernel.exchange_every == kNeverExchange) ladder = &r;
  }
  if (plain && ladder) {
    std::printf(
        "parallel tempering, %d rungs of %s without exchanges: %.3g ms per sweep against %.3g ms "
        "untempered; reading each replica's couplings takes %.1f%% of the tempered sweep\n",
        ladder->kernel.replicas, dims_text(ladder->dims).c_str(), 1e3 * ladder->seconds_per_sweep,
        1e3 * plain->seconds_per_sweep,
        100.0 * (1.0 - plain->seconds_per_sweep / ladder->seconds_per_sweep));
  }
  for (const Result& r : results) {
    if (!r.kernel.tempered || &r == ladder) continue;
    const Result* base = ladder ? ladder : plain;
    if (!base) continue;
    std::printf(
        "parallel tempering, %d rungs of %s exchanging every %d sweep(s): %.3g ms per sweep "
        "against %.3g ms %s; the exchange rounds take %.1f%% of the tempered sweep\n",
        r.kernel.replicas, dims_text(r.dims).c_str(), r.kernel.exchange_every,
        1e3 * r.seconds_per_sweep, 1e3 * base->seconds_per_sweep,
        ladder ? "without exchanges" : "untempered",
        100.0 * (1.0 - base->seconds_per_sweep / r.seconds_per_sweep));
  }
}

int run_bench(const BenchOptions& o, Communicator& ranks) {
  if (!o.scaling.empty()) return run_scaling(o, ranks);
  if (o.kernel == "multicanonical" && ranks.size() == 1) return run_multicanonical_bench(o);
  if (ranks.size() > 1) {
    if (ranks.rank() == 0)
      std::fprintf(stderr,
                   "sim bench: error: the single-GPU benchmark runs as one process; "
                   "under mpirun use --scaling weak or strong\n");
    return 2;
  }
  if (kernels_of(o).empty()) {
    std::fprintf(stderr, "sim bench: error: --kernel \"%s\"%s: the %s model's kernels are %s\n",
                 o.kernel.c_str(),
                 o.precision.empty() ? "" : (" with --precision " + o.precision).c_str(),
                 o.model.c_str(), kernel_names(o).c_str());
    return 2;
  }
  std::string reason;
  if (cuda_device_count(reason) == 0) {
    std::fprintf(stderr, "sim bench: error: %s; the benchmark times the GPU\n", reason.c_str());
    return 2;
  }
  const bool lattice_2d = o.model == "ising" || o.model == "potts";
  const std::vector<int64_t> dims = !o.dims.empty() ? o.dims
                                    : lattice_2d    ? std::vector<int64_t>{32768, 32768}
                                                    : std::vector<int64_t>{256, 256, 256};
  // The multi-spin-coded Ising kernel at the size of the published comparisons, 65536^2.
  const std::vector<int64_t> packed_dims =
      !o.dims.empty() ? o.dims : std::vector<int64_t>{65536, 65536};
  // Ensembles of many small lattices: 2D 256^2 (issue 21's ladder), 3D 64^3.
  const std::vector<int64_t> ensemble_dims = !o.dims.empty() ? o.dims
                                             : lattice_2d    ? std::vector<int64_t>{256, 256}
                                                             : std::vector<int64_t>{64, 64, 64};
  // Cluster moves at the sizes of their targets (issue 19): 8192^2, 256^3.
  const std::vector<int64_t> cluster_dims = !o.dims.empty() ? o.dims
                                            : lattice_2d    ? std::vector<int64_t>{8192, 8192}
                                                            : std::vector<int64_t>{256, 256, 256};
  const std::vector<int64_t> cpu_dims =
      !o.cpu_dims.empty() ? o.cpu_dims : cpu_lattice_like(o.dims.empty() ? dims : o.dims);
  for (const std::vector<int64_t>* d : {&dims, &cpu_dims}) {
    const bool sizes_ok =
        std::all_of(d->begin(), d->end(), [](int64_t l) { return l >= 2 && l % 2 == 0; });
    if (d->empty() || d->size() > 4 || !sizes_ok) {
      std::fprintf(stderr, "sim bench: error: --dims/--cpu-dims %s: 1 to 4 even sizes >= 2\n",
                   dims_text(*d).c_str());
      return 2;
    }
  }
  const double copy = cuda_copy_bandwidth(o.device, size_t(1) << 30, 20);
  std::vector<Result> results;
  std::string device;
  for (const KernelCase& k : kernels_of(o)) {
    Result r;
    r.kernel = k;
    r.dims = k.replicas > 1 ? ensemble_dims
             : k.cluster    ? cluster_dims
             : k.multispin  ? packed_dims
                            : dims;
    r.cpu_dims = k.replicas > 1 && o.cpu_dims.empty() ? r.dims : cpu_dims;
    if (k.multispin && !uses_packed_ising(settings_for(o, k, r.dims))) {
      std::fprintf(stderr, "sim bench: %s skipped: the last extent of %s is not a multiple of 64\n",
                   k.name.c_str(), dims_text(r.dims).c_str());
      continue;
    }
    std::unique_ptr<Engine> gpu;
    try {
      gpu = make_cuda_engine(settings_for(o, k, r.dims));
    } catch (const InputError& e) {  // e.g. a byte-per-spin lattice the packed one fits in
      std::fprintf(stderr, "sim bench: %s skipped on %s: %s\n", k.name.c_str(),
                   dims_text(r.dims).c_str(), e.what());
      continue;
    }
    device = gpu->device_name();
    r.seconds_per_sweep = seconds_per_sweep(*gpu, o.repeats);
    gpu.reset();
    const double sites = static_cast<double>(volume_of(r.dims)) * k.replicas;
    r.site_updates_per_ns = sites / (r.seconds_per_sweep * 1e9);
    EngineSettings s = settings_for(o, k, r.dims);
    r.bytes_per_site = k.multispin ? 2.0 / 8.0 : 2.0 * static_cast<double>(site_bytes(s));
    if (k.cluster) r.bytes_per_site += 1.0 + 3 * 4.0;  // bonds, labels written, read, flattened
    r.gigabytes_per_second = r.bytes_per_site * sites / r.seconds_per_sweep / 1e9;
    r.percent_of_copy = 100.0 * r.gigabytes_per_second * 1e9 / copy;
    auto cpu = make_cpu_engine(settings_for(o, k, cpu_dims));
    r.cpu_site_updates_per_ns = static_cast<double>(volume_of(r.cpu_dims)) * k.replicas /
                                (seconds_per_sweep(*cpu, 3) * 1e9);
    results.push_back(r);
  }
  std::printf("sim bench: %s, copy bandwidth %.1f GB/s (device-to-device, read + write)\n",
              device.c_str(), copy / 1e9);
  std::printf("%-20s %-7s %-14s %12s %10s %9s %9s   %s\n", "kernel", "type", "lattice",
              "updates/ns", "GB/s", "% copy", "B/site", "CPU updates/ns (lattice)");
  for (const Result& r : results) {
    std::printf("%-20s %-7s %-14s %12.2f %10.1f %8.1f%% %9.3g   %.4f (%s)\n", r.kernel.name.c_str(),
                type_name(o, r.kernel).c_str(), dims_text(r.dims).c_str(), r.site_updates_per_ns,
                r.gigabytes_per_second, r.percent_of_copy, r.bytes_per_site,
                r.cpu_site_updates_per_ns, dims_text(r.cpu_dims).c_str());
  }
  std::printf(
      "B/site: the least traffic of one site update (its variable read and written once); "
      "%% copy compares that traffic with the copy. The whole-lattice Langevin passes "
      "move far more (FFTs, layout permutations); the multi-spin-coded Ising kernels "
      "(1 bit per spin) are bound by arithmetic (random numbers), not memory. A cluster pass "
      "labels the whole lattice (wolff: for one cluster, whose sites it flips); its updates/ns "
      "are sites labelled per ns. Ensemble cases (replicas, tempering) count the site updates of "
      "all their replicas.\n");
  // Population annealing: many small lattices (multi-spin-coded for Ising) in one launch.
  std::vector<AnnealingRate> annealing;
  if (o.kernel.empty() && o.model != "phi4") {
    const KernelCase k{
        "metropolis", {UpdateAlgorithm::metropolis}, Precision::float32, o.model == "ising"};
    EngineSettings s = settings_for(o, k, {64, 64});
    for (const int replicas : {16384, 64}) {
      s.replicas = replicas;
      annealing.push_back(annealing_rate(s, replicas == 16384));
    }
    std::printf(
        "population annealing (metropolis, 64x64, 21 steps of 5 sweeps, beta 0 to %g): "
        "%.2f replica-site updates/ns with %d replicas, resampling %.1f%% of the time; "
        "CPU %.4f with %d replicas (resampling %.1f%%)\n",
        s.beta, annealing[0].site_updates_per_ns, annealing[0].replicas,
        100 * annealing[0].resampling_share, annealing[1].site_updates_per_ns,
        annealing[1].replicas, 100 * annealing[1].resampling_share);
  }
  print_tempering_overhead(results);
  if (!o.json_path.empty()) write_json(o.json_path, device, copy, o, results, annealing);
  return 0;
}

}  // namespace lattica

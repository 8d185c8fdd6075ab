#include "sim/cli/point.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>

#include "kernels/models/ising.hpp"
#include "sim/checkpoint_parts.hpp"
#include "sim/cli/resume.hpp"
#include "sim/config/schema.hpp"
#include "sim/decomposition.hpp"
#include "sim/engine/cuda_device.hpp"
#include "sim/output.hpp"
#include "sim/output/annealing_output.hpp"
#include "sim/run.hpp"
#include "sim/run/annealing.hpp"

namespace lattica::cli {

RunMetadata config_metadata(const Config& config) {
  RunMetadata meta;
  meta.input_toml = config.input_text;
  meta.resolved_toml = config.resolved_toml;
  meta.input_path = config.input_path;
  meta.dims = config.dims;
  meta.model = config.model_kind;
  meta.q = config.q;
  meta.n = config.n;
  meta.precision = config.precision;
  meta.algorithm = config.algorithm;
  meta.beta = config.beta;
  meta.kappa = config.kappa;
  meta.lambda = config.lambda;
  meta.field = config.field;
  meta.hits = config.hits;
  meta.structure_factor_every = config.structure_factor ? config.structure_factor_every : 0;
  meta.timeslice_every = config.timeslice ? config.timeslice_every : 0;
  meta.timeslice_momenta = config.timeslice_momenta;
  meta.seed = config.seed;
  meta.rungs = config.rungs();
  meta.exchange_every = config.exchange_every;
  meta.feedback = static_cast<int>(config.tempering_feedback);
  for (const config::TemperedCoupling& t : config::tempered_couplings()) {
    if (!(config.*t.ladder).empty()) meta.tempered.push_back(t.key);
  }
  meta.observable_means = config.observables_output == "means";
  meta.kept_replicas = static_cast<int>(config.kept_replicas);
  meta.point_index = config.point_index;
  for (const auto& [key, value] : config.swept_values) meta.swept += key + " = " + value + "\n";
  return meta;
}

namespace {

/// "NAME (CUDA device 0)" of one rank, or the ranks and their grid.
std::string device_description(const Config& config, const Engine& engine,
                               const Communicator& world) {
  if (world.size() == 1) return engine.device_name();
  const Decomposition d(config.dims, config.parallel_grid, world.size());
  return engine.device_name() + " on rank 0; " + std::to_string(world.size()) +
         " ranks, parallel.grid = " + grid_text(d.grid());
}

/// Metadata for the output file of one run on `engine`.
RunMetadata metadata(const Config& config, const Engine& engine, const Communicator& world) {
  RunMetadata meta = config_metadata(config);
  meta.snapshot = config.snapshot_packing == "bits" ? IsingModel::bit_packed_snapshot_format()
                                                    : engine.snapshot_format();
  meta.backend = engine.backend_name();
  meta.device = device_description(config, engine, world);
  meta.replicas = engine.replicas();  // tempered: run.replicas ladders of every rung
  if (meta.rungs > 0) {               // every coupling of the model at every rung, tempered or not
    const EngineSettings settings = config.engine_settings();
    const bool phi4 = config.model_kind == "phi4";
    const std::vector<std::pair<const char*, double EngineSettings::*>> couplings =
        phi4 ? std::vector<std::pair<const char*,
                                     double EngineSettings::*>>{{"kappa", &EngineSettings::kappa},
                                                                {"lambda", &EngineSettings::lambda},
                                                                {"h", &EngineSettings::field}}
             : std::vector<std::pair<const char*, double EngineSettings::*>>{
                   {"beta", &EngineSettings::beta}, {"h", &EngineSettings::field}};
    for (const auto& [name, member] : couplings) {
      std::vector<double> values;
      for (int k = 0; k < meta.rungs; ++k) values.push_back(at_rung(settings, k).*member);
      meta.rung_couplings.emplace_back(name, std::move(values));
    }
  }
  // Snapshot chunks follow the boxes of a decomposed run.
  if (world.size() > 1)
    meta.snapshot_box = Decomposition(config.dims, config.parallel_grid, world.size()).box();
  return meta;
}

/// Peak resident host memory of the ranks so far (collective): the largest and the smallest.
struct PeakMemory {
  int64_t largest = 0, smallest = 0;
  int ranks = 1;
};

PeakMemory peak_host_memory(Communicator& world) {
  rusage usage{};
  int64_t mine = 0;
  if (getrusage(RUSAGE_SELF, &usage) == 0) mine = static_cast<int64_t>(usage.ru_maxrss) * 1024;
  return {world.max(mine), -world.max(-mine), world.size()};
}

/// Device memory in use on the ranks' GPUs at the end of the run (collective), when the engine
/// runs on them: every buffer of the run is still held then.
PeakMemory device_memory_in_use(Communicator& world, const Engine& engine) {
  const int64_t mine = engine.backend_name() == "cuda" ? cuda_memory_in_use() : 0;
  return {world.max(mine), -world.max(-mine), world.size()};
}

/// The lines after a finished point: what was written, the tuned steps, the memory it took.
void report_finished(const Config& config, const Engine& engine, const RunSummary& s,
                     const PeakMemory& memory, const PeakMemory& device) {
  std::fprintf(stderr,
               "sim: wrote %s: %lld sweeps of %lld sites x %d replica(s), %lld measurements, "
               "%lld snapshots in %.3f s (%.3f site updates/ns, %s)\n",
               config.output_path.c_str(), static_cast<long long>(s.sweeps),
               static_cast<long long>(engine.volume()), engine.replicas(),
               static_cast<long long>(s.measurements), static_cast<long long>(s.snapshots),
               s.seconds, s.site_updates_per_ns, engine.backend_name().c_str());
  if (s.streamed_snapshots > 0) {
    std::fprintf(stderr, "sim: %lld snapshots written %s in %.3f s\n",
                 static_cast<long long>(s.streamed_snapshots),
                 s.collective_snapshots ? "collectively (parallel HDF5: every rank its box)"
                                        : "through rank 0 (a box at a time)",
                 s.snapshot_seconds);
  }
  const StepTuning t = engine.step_tuning();
  if (t.applies) {
    if (t.acceptance >= 0)
      std::fprintf(stderr, "sim: Metropolis step %.6g (%s), acceptance %.3f\n", t.step,
                   config.tune_step ? "tuned during thermalization" : "fixed", t.acceptance);
    else
      std::fprintf(stderr, "sim: Metropolis step %.6g (no thermalization to tune it)\n", t.step);
  }
  if (t.langevin) {
    std::fprintf(stderr, "sim: Langevin step %.6g%s, kernel shift %.6g", t.langevin_step,
                 t.adjusted && config.tune_step ? " (tuned during thermalization)" : "",
                 t.langevin_shift);
    if (t.adjusted && t.langevin_acceptance >= 0)
      std::fprintf(stderr, ", MALA acceptance %.3f", t.langevin_acceptance);
    std::fprintf(stderr, "\n");
  }
  const double mib = 1.0 / (1 << 20);
  if (memory.ranks == 1) {
    std::fprintf(stderr, "sim: peak host memory %.1f MiB\n", memory.largest * mib);
  } else {
    std::fprintf(stderr,
                 "sim: peak host memory per rank %.1f MiB (largest of %d; smallest %.1f MiB)\n",
                 memory.largest * mib, memory.ranks, memory.smallest * mib);
  }
  if (device.largest == 0) return;
  if (device.ranks == 1) {
    std::fprintf(stderr, "sim: device memory in use at the end %.1f MiB\n", device.largest * mib);
  } else {
    std::fprintf(stderr,
                 "sim: device memory in use at the end, per rank %.1f MiB (largest of %d; "
                 "smallest %.1f MiB)\n",
                 device.largest * mib, device.ranks, device.smallest * mib);
  }
}

/// Population annealing's settings from the configuration.
AnnealingSettings annealing_settings(const Config& config) {
  AnnealingSettings s;
  s.betas = config.annealing_schedule();
  s.sweeps = config.annealing_sweeps;
  s.populations = config.annealing_populations;
  s.resampling = config.annealing_resampling == "multinomial" ? Resampling::multinomial
                                                              : Resampling::systematic;
  s.seed = config.seed;
  s.log_z0_per_site = log_z0_per_site(config.engine_settings());
  return s;
}

/// A population annealing run ([annealing]) into a new output file: /annealing gets a row per
/// step; a progress line every tenth of the schedule, and the rates at the end.
void run_annealing(const Config& config, Engine& engine, OutputFile& out, bool quiet) {
  const AnnealingSettings settings = annealing_settings(config);
  AnnealingLayout layout;
  layout.observables = engine.observable_names();
  layout.replicas = engine.replicas();
  layout.populations = settings.populations;
  layout.replica_output = config.annealing_replica_output;
  layout.sweeps_per_step = settings.sweeps;
  layout.resampling = config.annealing_resampling;
  layout.volume = engine.volume();
  layout.log_z0 = settings.log_z0_per_site * static_cast<double>(engine.volume());
  AnnealingOutput output(out, layout);
  const auto steps = static_cast<int64_t>(settings.betas.size());
  double seconds = 0.0, resampling = 0.0;
  AnnealingStep last;
  run_population_annealing(engine, settings, [&](const AnnealingStep& step) {
    output.append(step);
    if ((step.step + 1) % config.flush_every == 0) out.flush();
    seconds += step.step_seconds;
    resampling += step.resampling_seconds;
    last = step;
    if (!quiet && (step.step + 1) % std::max<int64_t>(1, steps / 10) == 0) {
      std::fprintf(stderr,
                   "sim: annealing step %lld/%lld, beta %.6g, beta F per site %.10g, "
                   "%lld families, rho_t %.4g\n",
                   static_cast<long long>(step.step), static_cast<long long>(steps - 1), step.beta,
                   step.beta_free_energy, static_cast<long long>(step.families), step.rho_t);
    }
  });
  if (quiet) return;
  const double updates =
      static_cast<double>(engine.replicas()) * static_cast<double>(engine.volume()) *
      static_cast<double>(last.sweeps_done) * static_cast<double>(config.sequence.size());
  std::fprintf(stderr,
               "sim: wrote %s: population annealing of %d replicas (%d population(s)) over %lld "
               "temperatures, %lld sweeps each, in %.3f s: %.4g replica-site updates/ns per "
               "pass with the resampling, which took %.1f%% (%s)\n",
               config.output_path.c_str(), engine.replicas(), settings.populations,
               static_cast<long long>(steps), static_cast<long long>(settings.sweeps), seconds,
               updates / (seconds * 1e9), 100.0 * resampling / seconds,
               engine.backend_name().c_str());
}

}  // namespace

std::unique_ptr<Engine> make_engine(const Config& config,
                                    const std::shared_ptr<Communicator>& world, bool quiet) {
  EngineSettings settings = config.engine_settings();
  settings.communicator = world;
  // A grid that was asked for must fit the ranks, also a run of one process.
  if (!config.parallel_grid.empty())
    Decomposition(config.dims, config.parallel_grid, world->size());
  std::string reason;
  const int devices = config.backend == "cpu" ? 0 : cuda_device_count(reason);
  if (world->size() > 1 && devices > 0) {
    settings.cuda_device = (config.device + world->local_rank()) % devices;
  }
  if (config.backend == "cpu") return make_cpu_engine(settings);
  if (config.backend == "cuda") return make_cuda_engine(settings);
  const bool every_rank_has_gpu = world->max(devices > 0 ? 0 : 1) == 0;
  if (every_rank_has_gpu) return make_cuda_engine(settings);
  if (!quiet) {
    std::cerr << "sim: " << (devices > 0 ? "not every rank has a CUDA device" : reason)
              << "; using the CPU backend\n";
  }
  return make_cpu_engine(settings);
}

bool run_point(const Config& config, Engine& engine, Communicator& world, bool force, bool quiet,
               bool resume) {
  if (config.annealing() && world.size() > 1)  // before the output is touched
    throw InputError("population annealing ([annealing]) runs in one process, not on " +
                     std::to_string(world.size()) + " ranks");
  Checkpoint checkpoint;
  if (resume) {
    checkpoint = checkpoint_to_resume(config);
    read_resumed_configuration(checkpoint, config, world);
  }
  const bool root = world.rank() == 0;
  if (!quiet) {
    std::cerr << "sim: backend " << engine.backend_name() << " ("
              << device_description(config, engine, world) << ")";
    if (config.point_index >= 0) std::cerr << ", sweep point " << config.point_index;
    if (resume) std::cerr << ", resuming at sweep " << checkpoint.sweep;
    std::cerr << "\n";
  }
  std::unique_ptr<OutputFile> out;  // rank 0's: the others write nothing
  if (!root) {
  } else if (resume) {
    out = std::make_unique<OutputFile>(config.output_path, metadata(config, engine, world),
                                       engine.observable_names(), checkpoint.output);
  } else {
    // Stale ones (this run holds the output's lock: no live run owns them).
    std::filesystem::remove(checkpoint_path(config.output_path));
    remove_checkpoint_parts(checkpoint_path(config.output_path));
    std::filesystem::remove(working_copy_path(config.output_path));
    out = std::make_unique<OutputFile>(config.output_path, force, metadata(config, engine, world),
                                       engine.observable_names(), engine.observable_descriptions());
  }
  if (config.annealing()) {
    run_annealing(config, engine, *out, quiet);
    out->mark_finished();
    out->close();
    return false;
  }
  const RunSummary s = run_chain(config, engine, out.get(), progress_style(quiet, root),
                                 resume ? &checkpoint : nullptr, &world);
  const PeakMemory memory = peak_host_memory(world);  // every rank: a collective
  const PeakMemory device = device_memory_in_use(world, engine);
  if (out && !s.stopped) out->mark_finished();
  if (out) out->close();
  if (s.stopped && !root) return true;
  if (s.stopped) {
    std::fprintf(stderr,
                 "sim: stopped by %s after sweep %lld; checkpoint %s written; continue with "
                 "--resume\n",
                 s.stop_reason.c_str(), static_cast<long long>(s.sweeps),
                 checkpoint_path(config.output_path).c_str());
    return true;
  }
  if (!quiet) report_finished(config, engine, s, memory, device);
  return false;
}

}  // namespace lattica::cli

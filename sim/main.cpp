// sim: the Lattica command-line driver.
//
// Exit codes: 0 success; 2 bad usage, bad input, a resume that cannot continue or an output in
// use by another run (nothing written); 3 runtime failure;
// 75 stopped early by SIGTERM/SIGINT/SIGUSR1 or the walltime, with a checkpoint written (run
// again with --resume; 75 is EX_TEMPFAIL, "try again", for job scripts that requeue).

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "kernels/models/ising.hpp"
#include "sim/bench.hpp"
#include "sim/checkpoint.hpp"
#include "sim/communicator.hpp"
#include "sim/config.hpp"
#include "sim/decomposition.hpp"
#include "sim/engine/engine.hpp"
#include "sim/output.hpp"
#include "sim/output_lock.hpp"
#include "sim/run.hpp"
#include "sim/sweep_index.hpp"
#include "sim/version.hpp"

namespace {

constexpr int kExitBadInput = 2;
constexpr int kExitRuntime = 3;
constexpr int kExitStopped = 75;

/// The processes of this run: MPI ranks under mpirun/srun, else this one.
std::shared_ptr<lattica::Communicator> world;

/// Creates the engine the configuration asks for; "auto" prefers a usable GPU (on every rank,
/// or the CPU on every rank). Ranks take the GPUs of their node in turn: the one of local rank
/// i is device (run.device + i) mod the devices it sees.
std::unique_ptr<lattica::Engine> make_engine(const lattica::Config& config, bool quiet) {
  lattica::EngineSettings settings = config.engine_settings();
  settings.communicator = world;
  // A grid that was asked for must fit the ranks, also a run of one process.
  if (!config.parallel_grid.empty())
    lattica::Decomposition(config.dims, config.parallel_grid, world->size());
  std::string reason;
  const int devices = config.backend == "cpu" ? 0 : lattica::cuda_device_count(reason);
  if (world->size() > 1 && devices > 0) {
    settings.cuda_device = (config.device + world->local_rank()) % devices;
  }
  if (config.backend == "cpu") return lattica::make_cpu_engine(settings);
  if (config.backend == "cuda") return lattica::make_cuda_engine(settings);
  const bool every_rank_has_gpu = world->max(devices > 0 ? 0 : 1) == 0;
  if (every_rank_has_gpu) return lattica::make_cuda_engine(settings);
  if (!quiet) {
    std::cerr << "sim: " << (devices > 0 ? "not every rank has a CUDA device" : reason)
              << "; using the CPU backend\n";
  }
  return lattica::make_cpu_engine(settings);
}

/// "NAME (CUDA device 0)" of one rank, or the ranks and their grid.
std::string device_description(const lattica::Config& config, const lattica::Engine& engine) {
  if (world->size() == 1) return engine.device_name();
  const lattica::Decomposition d(config.dims, config.parallel_grid, world->size());
  return engine.device_name() + " on rank 0; " + std::to_string(world->size()) +
         " ranks, parallel.grid = " + lattica::grid_text(d.grid());
}

/// Metadata for the output file of one run.
lattica::RunMetadata metadata(const lattica::Config& config, const lattica::Engine& engine) {
  lattica::RunMetadata meta;
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
  meta.snapshot = config.snapshot_packing == "bits"
                      ? lattica::IsingModel::bit_packed_snapshot_format()
                      : engine.snapshot_format();
  meta.structure_factor_every = config.structure_factor ? config.structure_factor_every : 0;
  meta.timeslice_every = config.timeslice ? config.timeslice_every : 0;
  meta.timeslice_momenta = config.timeslice_momenta;
  meta.seed = config.seed;
  meta.backend = engine.backend_name();
  meta.device = device_description(config, engine);
  meta.replicas = config.replicas;
  meta.point_index = config.point_index;
  for (const auto& [key, value] : config.swept_values) meta.swept += key + " = " + value + "\n";
  return meta;
}

/// The checkpoint a --resume continues from, checked against the input; InputError (exit 2,
/// nothing touched) when there is none or it belongs to another chain.
lattica::Checkpoint checkpoint_to_resume(const lattica::Config& config) {
  const std::string path = lattica::checkpoint_path(config.output_path);
  lattica::Checkpoint c;
  try {
    c = lattica::read_checkpoint(path);
  } catch (const lattica::CheckpointError& e) {
    throw lattica::InputError(std::string("--resume: ") + e.what());
  }
  const std::vector<std::string> changed = lattica::chain_differences(c.chain_config, config.chain_toml);
  if (!changed.empty()) {
    std::string list;
    for (const std::string& line : changed) list += "\n  " + line;
    throw lattica::InputError("--resume: " + path +
                              " continues a chain with other settings; these keys differ "
                              "(only run.measurements may grow, and the backend, threads, "
                              "device, output and checkpoint keys change):" + list);
  }
  const int64_t total = config.total_sweeps();
  if (total < c.sweep) {
    throw lattica::InputError("--resume: run.measurements = " +
                              std::to_string(config.measurements) + " asks for " +
                              std::to_string(total) + " sweeps, but the checkpoint is at sweep " +
                              std::to_string(c.sweep));
  }
  try {
    lattica::check_checkpoint_fits(c, config, path);  // a valid checksum, impossible contents
  } catch (const lattica::CheckpointError& e) {
    throw lattica::InputError(std::string("--resume: ") + e.what());
  }
  if (!std::filesystem::exists(config.output_path)) {
    throw lattica::InputError("--resume: the output " + config.output_path +
                              " of the checkpoint is missing");
  }
  return c;
}

/// How a point of the plan starts.
enum class PointStart : int8_t { fresh, resume, skip };

/// How --resume continues one point, decided by rank 0 while it holds the point's lock: from
/// its checkpoint; not at all when it is finished; from the start when it is a point of a sweep
/// that never got to it. InputError (exit 2, nothing touched) when it cannot continue.
PointStart resume_start(const lattica::Config& config, bool sweep) {
  std::error_code ec;
  const bool has_output = std::filesystem::exists(config.output_path, ec);
  if (std::filesystem::exists(lattica::checkpoint_path(config.output_path), ec)) {
    const lattica::Checkpoint c = checkpoint_to_resume(config);
    // The checkpoint at the end of a run is kept for extending it; without more measurements
    // there is nothing to do (unless the run died before it could say it finished).
    const bool done =
        c.sweep == config.total_sweeps() && lattica::output_finished(config.output_path);
    return done ? PointStart::skip : PointStart::resume;
  }
  if (has_output && lattica::output_finished(config.output_path)) return PointStart::skip;
  if (sweep && !has_output) return PointStart::fresh;
  if (sweep) {
    const std::string n = std::to_string(config.point_index);
    throw lattica::InputError("--resume: sweep point " + n + ": " + config.output_path +
                              " has no checkpoint and did not finish (stopped before its first "
                              "checkpoint?); run that point again with --force --task-id " +
                              n);
  }
  checkpoint_to_resume(config);  // throws, saying why there is no checkpoint
  return PointStart::resume;
}

/// Runs one point of the plan on `engine`, from the start or from its checkpoint; true when it
/// stopped early (signal or walltime) with a checkpoint.
bool run_point(const lattica::Config& config, lattica::Engine& engine, bool force, bool quiet,
               bool resume) {
  lattica::Checkpoint checkpoint;
  if (resume) checkpoint = checkpoint_to_resume(config);
  const bool root = world->rank() == 0;
  if (!quiet) {
    std::cerr << "sim: backend " << engine.backend_name() << " ("
              << device_description(config, engine) << ")";
    if (config.point_index >= 0) std::cerr << ", sweep point " << config.point_index;
    if (resume) std::cerr << ", resuming at sweep " << checkpoint.sweep;
    std::cerr << "\n";
  }
  std::unique_ptr<lattica::OutputFile> out;  // rank 0's: the others write nothing
  if (!root) {
  } else if (resume) {
    out = std::make_unique<lattica::OutputFile>(config.output_path, metadata(config, engine),
                                                engine.observable_names(), checkpoint.output);
  } else {
    // Stale ones (this run holds the output's lock: no live run owns them).
    std::filesystem::remove(lattica::checkpoint_path(config.output_path));
    std::filesystem::remove(lattica::working_copy_path(config.output_path));
    out = std::make_unique<lattica::OutputFile>(config.output_path, force, metadata(config, engine),
                                                engine.observable_names(),
                                                engine.observable_descriptions());
  }
  const bool live = !quiet && isatty(STDERR_FILENO);
  const lattica::RunSummary s = lattica::run_chain(config, engine, out.get(), live,
                                                   resume ? &checkpoint : nullptr, world.get());
  if (out && !s.stopped) out->mark_finished();
  if (out) out->close();
  if (s.stopped && !root) return true;
  if (s.stopped) {
    std::fprintf(stderr,
                 "sim: stopped by %s after sweep %lld; checkpoint %s written; continue with "
                 "--resume\n",
                 s.stop_reason.c_str(), static_cast<long long>(s.sweeps),
                 lattica::checkpoint_path(config.output_path).c_str());
    return true;
  }
  if (!quiet) {
    std::fprintf(stderr,
                 "sim: wrote %s: %lld sweeps of %lld sites x %d replica(s), %lld measurements, "
                 "%lld snapshots in %.3f s (%.3f site updates/ns, %s)\n",
                 config.output_path.c_str(), static_cast<long long>(s.sweeps),
                 static_cast<long long>(engine.volume()), engine.replicas(),
                 static_cast<long long>(s.measurements), static_cast<long long>(s.snapshots),
                 s.seconds, s.site_updates_per_ns, engine.backend_name().c_str());
    const lattica::StepTuning t = engine.step_tuning();
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
  }
  return false;
}

/// Reports a runtime failure and ends every rank with exit code 3.
[[noreturn]] void fail_at_runtime(const std::exception& e) {
  std::cerr << "sim: runtime failure";
  if (world->size() > 1) std::cerr << " on rank " << world->rank();
  std::cerr << ": " << e.what() << std::endl;
  lattica::abort_processes(kExitRuntime);  // the other ranks would wait for this one
  // Skip the exit handlers: HDF5's own (closing files it could not flush, e.g. on a full
  // disk) can crash, which would hide this message's exit code.
  std::_Exit(kExitRuntime);
}

/// The exit code of the run on every rank; messages come from rank 0 only (`quiet` elsewhere).
int run_main(int argc, char** argv);

}  // namespace

int main(int argc, char** argv) {
  lattica::install_stop_signals();  // first: a signal during start-up stops at the first sweeps
  try {
    world = lattica::start_processes(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "sim: runtime failure: cannot start MPI: " << e.what() << std::endl;
    return kExitRuntime;
  }
  const int code = run_main(argc, argv);
  world.reset();
  lattica::finish_processes();
  return code;
}

namespace {

int run_main(int argc, char** argv) {
  CLI::App app{
      "Lattica: lattice Monte Carlo on the GPU, with a bit-identical CPU reference.\n"
      "Samples the model described by INPUT.toml and writes an HDF5 file (one per point of a "
      "parameter sweep)."};
  std::string input_path;
  lattica::ConfigOverrides overrides;
  std::string backend, output, seed;
  int64_t task_id = -1;
  bool force = false, quiet = false, resume = false;
  std::string recover;
  app.add_option("input", input_path, "input file (TOML)");
  app.add_option("--recover", recover,
                 "repair an output file left by a crash, a full disk or a copy cut short (pad "
                 "it to its recorded length, keep of every series the committed rows that are "
                 "in the file), then exit; the file is replaced only when that succeeded")
      ->type_name("FILE");
  app.add_option("--backend", backend, "auto|cpu|cuda (overrides run.backend)");
  app.add_option("-o,--output", output, "output HDF5 file (overrides output.path)");
  app.add_option("--set", overrides.set,
                 "override any input key, e.g. --set model.beta=0.44 (repeatable)")
      ->type_name("KEY=VALUE")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--seed", seed, "random seed (overrides run.seed)");
  app.add_option("--task-id", task_id,
                 "run only point N of a parameter sweep (e.g. $SLURM_ARRAY_TASK_ID)")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--force", force, "overwrite existing output files");
  app.add_flag("-q,--quiet", quiet, "print errors only");
  app.add_flag("--resume", resume,
               "continue from the checkpoint next to the output file (OUTPUT.checkpoint), "
               "appending to the same output; a sweep continues its unfinished points");
  lattica::BenchOptions bench;
  CLI::App* bench_command = app.add_subcommand(
      "bench", "time every update kernel of a model on the GPU against its copy bandwidth, "
               "with the CPU backend's rate for comparison");
  bench_command->add_option("--model", bench.model, "ising|potts|on|phi4")
      ->check(CLI::IsMember({"ising", "potts", "on", "phi4"}));
  bench_command->add_option("--q", bench.q, "Potts states")->check(CLI::Range(2, 256));
  bench_command->add_option("--n", bench.n, "O(n) components")->check(CLI::Range(2, 4));
  bench_command->add_option("--dims", bench.dims, "GPU lattice (default fills a large GPU)")
      ->expected(1, 4);
  bench_command->add_option("--cpu-dims", bench.cpu_dims, "CPU lattice for the comparison")
      ->expected(1, 4);
  bench_command->add_option("--repeats", bench.repeats, "timed repeats (median)")
      ->check(CLI::Range(1, 1000));
  bench_command->add_option("--kernel", bench.kernel,
                            "time this kernel only (e.g. \"heatbath\", \"metropolis multispin\")");
  bench_command->add_option("--precision", bench.precision, "continuous models: float or double only")
      ->check(CLI::IsMember({"float", "double"}));
  bench_command->add_option("--device", bench.device, "CUDA device index");
  bench_command->add_option("--json", bench.json_path, "also write the results as JSON");
  bench_command
      ->add_option("--scaling", bench.scaling,
                   "weak: a box of --dims per rank; strong: the lattice --dims; over 1, 2, 4, ... "
                   "and all ranks of an MPI run (mpirun -n N sim bench --scaling ...)")
      ->check(CLI::IsMember({"weak", "strong"}));
  bench_command->add_option("--backend", bench.backend, "scaling benchmark: cuda or cpu")
      ->check(CLI::IsMember({"cuda", "cpu"}));
  app.set_version_flag("--version", std::string("sim (Lattica) ") + lattica::kLatticaVersion +
                                        " (" + lattica::kLatticaGitCommit + ")");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : kExitBadInput;
  }
  if (*bench_command) {
    try {
      return lattica::run_bench(bench, *world);
    } catch (const lattica::InputError& e) {
      std::cerr << "sim bench: error: " << e.what() << "\n";
      return kExitBadInput;
    } catch (const std::exception& e) {
      std::cerr << "sim bench: runtime failure: " << e.what() << std::endl;
      std::_Exit(kExitRuntime);
    }
  }
  const bool root = world->rank() == 0;
  if (!root) quiet = true;  // one rank speaks for all
  if (!recover.empty()) {
    if (!root) return 0;
    try {
      const lattica::OutputLock lock(recover);  // never under a live run
      const std::vector<std::string> done = lattica::recover_output(recover);
      std::cerr << "sim: " << recover << ": "
                << (done.empty() ? "nothing to repair" : "repaired") << "\n";
      for (const std::string& line : done) std::cerr << "  " << line << "\n";
      return 0;
    } catch (const lattica::InputError& e) {
      std::cerr << "sim: error: --recover " << recover << ": " << e.what() << "\n";
      return kExitBadInput;
    } catch (const std::exception& e) {
      std::cerr << "sim: error: --recover " << recover << ": " << e.what() << std::endl;
      std::_Exit(kExitRuntime);
    }
  }
  if (input_path.empty()) {
    std::cerr << "sim: error: an input file is required (or --recover FILE)\n";
    return kExitBadInput;
  }
  if (app.count("--backend")) overrides.backend = backend;
  if (app.count("--output")) overrides.output = output;
  if (app.count("--seed")) overrides.seed = seed;

  lattica::RunPlan plan;
  try {
    plan = lattica::load_plan(input_path, overrides);
  } catch (const lattica::ConfigError& e) {
    if (root) for (const auto& m : e.messages()) std::cerr << "sim: error: " << m << "\n";
    return kExitBadInput;
  }
  const int64_t n_points = static_cast<int64_t>(plan.points.size());
  if (task_id >= n_points) {
    if (!root) return kExitBadInput;
    std::cerr << "sim: error: --task-id " << task_id << ": the input has " << n_points
              << " point(s), numbered 0 to " << n_points - 1 << "\n";
    return kExitBadInput;
  }
  std::vector<const lattica::Config*> selected;
  for (const auto& c : plan.points) {
    if (task_id < 0 || c.point_index == task_id || (n_points == 1 && task_id == 0))
      selected.push_back(&c);
  }
  // Everything that can refuse the run is checked before anything is written, so that a
  // refusal (exit 2) leaves every file as it was: the outputs (by rank 0, which writes them, for
  // every rank), the grids, and, under each point's lock, how --resume continues it. The locks
  // are held until the run ends, so no other run touches these outputs meanwhile.
  const bool sweep = !plan.swept.empty();
  std::vector<lattica::OutputLock> locks;  // rank 0's
  std::vector<PointStart> starts(selected.size(), resume ? PointStart::resume : PointStart::fresh);
  bool refused = false;
  for (const lattica::Config* c : selected) {
    std::error_code ec;
    if (root && !refused && !force && !resume && std::filesystem::exists(c->output_path, ec)) {
      std::cerr << "sim: error: output.path = \"" << c->output_path
                << "\": the file exists; use --force to overwrite it\n";
      refused = true;
    }
  }
  try {
    for (const lattica::Config* c : selected) {
      if (!refused && !c->parallel_grid.empty())
        lattica::Decomposition(c->dims, c->parallel_grid, world->size());
    }
    for (size_t i = 0; root && !refused && i < selected.size(); ++i) {
      locks.emplace_back(selected[i]->output_path);
      if (resume) starts[i] = resume_start(*selected[i], sweep);
    }
  } catch (const lattica::InputError& e) {
    if (root) std::cerr << "sim: error: " << e.what() << "\n";
    refused = true;
  } catch (const std::exception& e) {
    locks.clear();
    fail_at_runtime(e);
  }
  if (world->max(refused ? 1 : 0) != 0) return kExitBadInput;
  world->broadcast(starts.data(), starts.size() * sizeof(PointStart), 0);

  bool index_written = !sweep || !root;
  auto write_index = [&] {
    if (index_written) return;
    lattica::write_sweep_index(plan);
    if (!quiet)
      std::cerr << "sim: sweep of " << n_points << " points, index " << plan.index_path << "\n";
    index_written = true;
  };
  try {
    for (size_t i = 0; i < selected.size(); ++i) {
      const lattica::Config& c = *selected[i];
      if (starts[i] == PointStart::skip) {
        if (!quiet) {
          std::cerr << "sim: ";
          if (c.point_index >= 0) std::cerr << "sweep point " << c.point_index << ": ";
          std::cerr << c.output_path << " is finished; skipped\n";
        }
        continue;
      }
      std::unique_ptr<lattica::Engine> engine = make_engine(c, quiet);
      write_index();  // once the first point is sure to run
      if (run_point(c, *engine, force, quiet, starts[i] == PointStart::resume)) return kExitStopped;
    }
    write_index();  // every point was finished already
  } catch (const lattica::InputError& e) {
    // Every rank reads the same input, so every rank finds the same error.
    if (root) std::cerr << "sim: error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    locks.clear();
    fail_at_runtime(e);
  }
  return 0;
}

}  // namespace

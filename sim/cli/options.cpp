#include "sim/cli/options.hpp"

#include <CLI/CLI.hpp>

#include "sim/cli/exits.hpp"
#include "sim/version.hpp"

namespace lattica::cli {

namespace {

/// The `bench` subcommand's options.
CLI::App* add_bench_command(CLI::App& app, BenchOptions& bench) {
  CLI::App* command = app.add_subcommand(
      "bench",
      "time every update kernel of a model on the GPU against its copy bandwidth, "
      "with the CPU backend's rate for comparison");
  command->add_option("--model", bench.model, "ising|potts|on|phi4")
      ->check(CLI::IsMember({"ising", "potts", "on", "phi4"}));
  command->add_option("--q", bench.q, "Potts states")->check(CLI::Range(2, 256));
  command->add_option("--n", bench.n, "O(n) components")->check(CLI::Range(2, 4));
  command->add_option("--dims", bench.dims, "GPU lattice (default fills a large GPU)")
      ->expected(1, 4);
  command->add_option("--cpu-dims", bench.cpu_dims, "CPU lattice for the comparison")
      ->expected(1, 4);
  command->add_option("--repeats", bench.repeats, "timed repeats (median)")
      ->check(CLI::Range(1, 1000));
  command->add_option("--kernel", bench.kernel,
                      "time this kernel only (e.g. \"heatbath\", \"metropolis multispin\"; "
                      "\"multicanonical\": multicanonical walkers, see --walkers; with "
                      "--scaling, \"structure factor\": a measurement through the distributed "
                      "FFT, \"snapshot\": a frame written to sim_bench_snapshots.h5)");
  command->add_option("--walkers", bench.walkers, "--kernel multicanonical: walkers on the GPU")
      ->check(CLI::Range(1, 65536));
  command->add_option("--precision", bench.precision, "continuous models: float or double only")
      ->check(CLI::IsMember({"float", "double"}));
  command->add_option("--device", bench.device, "CUDA device index");
  command->add_option("--json", bench.json_path, "also write the results as JSON");
  command
      ->add_option("--scaling", bench.scaling,
                   "weak: a box of --dims per rank; strong: the lattice --dims; over 1, 2, 4, ... "
                   "and all ranks of an MPI run (mpirun -n N sim bench --scaling ...)")
      ->check(CLI::IsMember({"weak", "strong"}));
  command->add_option("--backend", bench.backend, "scaling benchmark: cuda or cpu")
      ->check(CLI::IsMember({"cuda", "cpu"}));
  return command;
}

}  // namespace

std::optional<int> parse_command_line(int argc, char** argv, CliOptions& options) {
  CLI::App app{
      "Lattica: lattice Monte Carlo on the GPU, with a bit-identical CPU reference.\n"
      "Samples the model described by INPUT.toml and writes an HDF5 file (one per point of a "
      "parameter sweep)."};
  std::string backend, output, seed;
  app.add_option("input", options.input_path, "input file (TOML)");
  app.add_option("--recover", options.recover,
                 "repair an output file left by a crash, a full disk or a copy cut short (pad "
                 "it to its recorded length, keep of every series the committed rows that are "
                 "in the file), then exit; the file is replaced only when that succeeded")
      ->type_name("FILE");
  app.add_option("--backend", backend, "auto|cpu|cuda (overrides run.backend)");
  app.add_option("-o,--output", output, "output HDF5 file (overrides output.path)");
  app.add_option("--set", options.overrides.set,
                 "override any input key, e.g. --set model.beta=0.44 (repeatable)")
      ->type_name("KEY=VALUE")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--seed", seed, "random seed (overrides run.seed)");
  app.add_option("--task-id", options.task_id,
                 "run only point N of a parameter sweep (e.g. $SLURM_ARRAY_TASK_ID)")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--force", options.force, "overwrite existing output files");
  app.add_flag("-q,--quiet", options.quiet, "print errors only");
  app.add_flag("--resume", options.resume,
               "continue from the checkpoint next to the output file (OUTPUT.checkpoint), "
               "appending to the same output; a sweep continues its unfinished points");
  const CLI::App* bench = add_bench_command(app, options.bench_options);
  app.set_version_flag("--version", std::string("sim (Lattica) ") + kLatticaVersion + " (" +
                                        kLatticaGitCommit + ")");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : kExitBadInput;
  }
  options.bench = static_cast<bool>(*bench);
  if (app.count("--backend")) options.overrides.backend = backend;
  if (app.count("--output")) options.overrides.output = output;
  if (app.count("--seed")) options.overrides.seed = seed;
  return std::nullopt;
}

}  // namespace lattica::cli

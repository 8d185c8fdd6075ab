// sim: the Lattica command-line driver. The command line is defined in sim/cli/options.cpp,
// the commands in sim/cli/, the exit codes in sim/cli/exits.hpp.

#include <iostream>
#include <memory>
#include <optional>

#include "sim/cli/commands.hpp"
#include "sim/cli/exits.hpp"
#include "sim/cli/options.hpp"
#include "sim/communicator.hpp"
#include "sim/run.hpp"

namespace {

/// The exit code of the invocation on every rank; messages come from rank 0 only.
int run_command_line(int argc, char** argv, const std::shared_ptr<lattica::Communicator>& world) {
  using namespace lattica::cli;
  CliOptions options;
  if (const std::optional<int> done = parse_command_line(argc, argv, options)) return *done;
  if (options.bench) return bench_command(options.bench_options, *world);
  if (world->rank() != 0) options.quiet = true;  // one rank speaks for all
  if (!options.recover.empty()) return recover_command(options.recover, *world);
  if (options.input_path.empty()) {
    std::cerr << "sim: error: an input file is required (or --recover FILE)\n";
    return kExitBadInput;
  }
  return run_input(options, world);
}

}  // namespace

int main(int argc, char** argv) {
  lattica::install_stop_signals();  // first: a signal during start-up stops at the first sweeps
  std::shared_ptr<lattica::Communicator> world;  // MPI ranks under mpirun/srun, else this one
  try {
    world = lattica::start_processes(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "sim: runtime failure: cannot start MPI: " << e.what() << std::endl;
    return lattica::cli::kExitRuntime;
  }
  const int code = run_command_line(argc, argv, world);
  world.reset();
  lattica::finish_processes();
  return code;
}

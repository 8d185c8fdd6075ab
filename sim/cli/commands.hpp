#pragma once
// sim's commands, one per way it is invoked; each returns the process exit code (exits.hpp).

#include <memory>
#include <string>

#include "sim/bench.hpp"
#include "sim/cli/options.hpp"
#include "sim/communicator.hpp"

namespace lattica::cli {

/// `sim INPUT.toml`: runs every point of the input's plan (one run or a parameter sweep; one
/// point with --task-id), fresh or with --resume, on every rank of `world`.
int run_input(const CliOptions& options, const std::shared_ptr<Communicator>& world);

/// `sim --recover FILE`: repairs an output file (rank 0 alone; the others return 0).
int recover_command(const std::string& path, const Communicator& world);

/// `sim bench ...`: the kernel benchmark.
int bench_command(const BenchOptions& options, Communicator& world);

}  // namespace lattica::cli

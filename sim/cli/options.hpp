#pragma once
// sim's command line: what it asks for, parsed with CLI11.

#include <cstdint>
#include <optional>
#include <string>

#include "sim/bench.hpp"
#include "sim/config.hpp"

namespace lattica::cli {

/// What one invocation of sim asks for.
struct CliOptions {
  std::string input_path;     ///< INPUT.toml; empty: none given
  ConfigOverrides overrides;  ///< --set, --backend, --output, --seed
  int64_t task_id = -1;       ///< --task-id: one point of a sweep; -1: every point
  bool force = false;         ///< overwrite existing outputs
  bool quiet = false;         ///< errors only
  bool resume = false;        ///< continue from checkpoints
  std::string recover;        ///< --recover FILE; empty: none
  bool bench = false;         ///< the `bench` subcommand
  BenchOptions bench_options;
};

/// Parses the command line into `options`. Returns the exit code when that ends the program
/// (--help or --version: 0, printed; a usage error: 2, with CLI11's message), else nothing.
std::optional<int> parse_command_line(int argc, char** argv, CliOptions& options);

}  // namespace lattica::cli

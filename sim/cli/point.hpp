#pragma once
// One point of the plan: its engine, its output file and its run.

#include <memory>

#include "sim/communicator.hpp"
#include "sim/config.hpp"
#include "sim/engine/engine.hpp"
#include "sim/output.hpp"

namespace lattica::cli {

/// The output metadata the configuration alone determines (not the backend, device, replicas
/// or snapshot format).
RunMetadata config_metadata(const Config& config);

/// Runs a multicanonical point ([multicanonical]): Wang-Landau, then the production with
/// frozen weights, written to the output (`force`: over an existing one; `resume`: from its
/// checkpoint). One process only. Returns true when it stopped early with a checkpoint.
bool run_multicanonical_point(const Config& config, Communicator& world, bool force, bool quiet,
                              bool resume);

/// Creates the engine the configuration asks for; "auto" prefers a usable GPU (on every rank,
/// or the CPU on every rank). Ranks take the GPUs of their node in turn: the one of local rank
/// i is device (run.device + i) mod the devices it sees.
std::unique_ptr<Engine> make_engine(const Config& config,
                                    const std::shared_ptr<Communicator>& world, bool quiet);

/// Runs one point of the plan on `engine` (every rank of `world`; rank 0 writes the output and
/// speaks unless `quiet`), from the start (`force`: over an existing output) or from its
/// checkpoint (`resume`); true when it stopped early (signal or walltime) with a checkpoint.
bool run_point(const Config& config, Engine& engine, Communicator& world, bool force, bool quiet,
               bool resume);

}  // namespace lattica::cli

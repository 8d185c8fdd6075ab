#pragma once
// sim's exit codes: 0 success; 2 bad usage, bad input, a resume that cannot continue or an
// output in use by another run (nothing written); 3 runtime failure; 75 stopped early by
// SIGTERM/SIGINT/SIGUSR1 or the walltime, with a checkpoint written (run again with --resume;
// 75 is EX_TEMPFAIL, "try again", for job scripts that requeue).

#include <exception>

namespace lattica {
class Communicator;
}

namespace lattica::cli {

constexpr int kExitBadInput = 2;
constexpr int kExitRuntime = 3;
constexpr int kExitStopped = 75;

/// Reports a runtime failure and ends every rank of `world` with exit code 3.
[[noreturn]] void fail_at_runtime(const std::exception& e, const Communicator& world);

}  // namespace lattica::cli

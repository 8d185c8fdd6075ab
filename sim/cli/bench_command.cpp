#include <cstdlib>
#include <iostream>

#include "sim/cli/commands.hpp"
#include "sim/cli/exits.hpp"
#include "sim/engine/engine.hpp"

namespace lattica::cli {

int bench_command(const BenchOptions& options, Communicator& world) {
  try {
    return run_bench(options, world);
  } catch (const InputError& e) {
    std::cerr << "sim bench: error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "sim bench: runtime failure: " << e.what() << std::endl;
    std::_Exit(kExitRuntime);
  }
}

}  // namespace lattica::cli

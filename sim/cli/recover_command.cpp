#include <cstdlib>
#include <iostream>
#include <vector>

#include "sim/cli/commands.hpp"
#include "sim/cli/exits.hpp"
#include "sim/output.hpp"
#include "sim/output_lock.hpp"

namespace lattica::cli {

int recover_command(const std::string& path, const Communicator& world) {
  if (world.rank() != 0) return 0;
  try {
    const OutputLock lock(path);  // never under a live run
    const std::vector<std::string> done = recover_output(path);
    std::cerr << "sim: " << path << ": " << (done.empty() ? "nothing to repair" : "repaired")
              << "\n";
    for (const std::string& line : done) std::cerr << "  " << line << "\n";
    return 0;
  } catch (const InputError& e) {
    std::cerr << "sim: error: --recover " << path << ": " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "sim: error: --recover " << path << ": " << e.what() << std::endl;
    std::_Exit(kExitRuntime);
  }
}

}  // namespace lattica::cli

#include "sim/cli/exits.hpp"

#include <cstdlib>
#include <iostream>

#include "sim/communicator.hpp"

namespace lattica::cli {

void fail_at_runtime(const std::exception& e, const Communicator& world) {
  std::cerr << "sim: runtime failure";
  if (world.size() > 1) std::cerr << " on rank " << world.rank();
  std::cerr << ": " << e.what() << std::endl;
  abort_processes(kExitRuntime);  // the other ranks would wait for this one
  // Skip the exit handlers: HDF5's own (closing files it could not flush, e.g. on a full
  // disk) can crash, which would hide this message's exit code.
  std::_Exit(kExitRuntime);
}

}  // namespace lattica::cli

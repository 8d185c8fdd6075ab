// Stand-ins for a build without the CUDA toolkit: the CUDA backend reports itself absent.
#include <stdexcept>

#include "sim/engine/cuda_device.hpp"
#include "sim/engine/engine.hpp"
#include "sim/engine/multicanonical/walker_ensemble.hpp"

namespace lattica {

int cuda_device_count(std::string& reason) {
  reason = "this sim was built without the CUDA toolkit";
  return 0;
}

double cuda_copy_bandwidth(int, size_t, int) {
  throw InputError("the copy bandwidth needs a GPU: this sim was built without the CUDA toolkit");
}

int64_t cuda_memory_in_use() { return 0; }

std::unique_ptr<Engine> make_cuda_engine(const EngineSettings&) {
  throw InputError("run.backend = \"cuda\": this sim was built without the CUDA toolkit");
}

std::unique_ptr<WalkerEnsemble> make_cuda_walkers(const WalkerSettings&) {
  throw InputError("run.backend = \"cuda\": this sim was built without the CUDA toolkit");
}

}  // namespace lattica

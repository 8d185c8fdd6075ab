// The CUDA backend's entry points: devices, their copy bandwidth, and an engine that fits.
#include "kernels/backend/cuda_exec.cuh"
#include "sim/decomposition.hpp"
#include "sim/engine/cuda_device.hpp"
#include "sim/engine/decomposed_box.hpp"
#include "sim/engine/engine_factory.hpp"
#include "sim/engine/memory.hpp"
#include "sim/parallel/slab_fft.hpp"

namespace lattica {

double cuda_copy_bandwidth(int device, size_t bytes, int repeats) {
  const CudaExec exec(device);
  return exec.copy_bandwidth(bytes, repeats);
}

int cuda_device_count(std::string& reason) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    // Without any NVIDIA driver the runtime reports an "insufficient" driver; say it plainly.
    reason =
        status == cudaErrorInsufficientDriver
            ? std::string(
                  "no usable CUDA device (no NVIDIA driver, or one older than this CUDA runtime)")
            : std::string("no usable CUDA device (") + cudaGetErrorString(status) + ")";
    cudaGetLastError();  // clear the sticky error so later CUDA calls are not blamed for it
    return 0;
  }
  if (count == 0) reason = "no CUDA device found";
  return count;
}

void select_cuda_device(int device) {
  std::string reason;
  const int count = cuda_device_count(reason);
  if (count == 0) throw CudaError(reason);
  if (device < 0 || device >= count) {
    throw InputError("run.device = " + std::to_string(device) + ": only " + std::to_string(count) +
                     " CUDA device(s) present");
  }
  LATTICA_CUDA_CHECK(cudaSetDevice(device));
}

int64_t cuda_memory_in_use() {
  size_t free = 0, total = 0;
  LATTICA_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  return static_cast<int64_t>(total - free);
}

std::unique_ptr<Engine> make_cuda_engine(const EngineSettings& settings) {
  select_cuda_device(settings.cuda_device);
  EngineSettings box = settings;  // a decomposed engine holds its box with the ghost layers
  size_t distributed_fft = 0;     // and the distributed FFT's buffers
  if (decomposed(settings)) {
    const Decomposition d(settings.dims, settings.parallel_grid, settings.communicator->size());
    box.dims = d.storage_extents();
    bool axis0_only = true;
    for (size_t a = 1; a < settings.dims.size(); ++a) axis0_only &= !d.split(static_cast<int>(a));
    const bool columns_fit = slab_columns_fit(settings.dims, settings.communicator->rank(),
                                              settings.communicator->size());
    distributed_fft =
        decomposed_fourier_bytes(settings, volume_of(box.dims), axis0_only, columns_fit);
  }
  const size_t needed = engine_bytes(box) + distributed_fft;
  size_t free_bytes = 0, total_bytes = 0;
  LATTICA_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (needed > free_bytes) {
    throw InputError("lattice.dims: the lattice needs " + std::to_string(needed >> 20) +
                     " MiB of GPU memory but only " + std::to_string(free_bytes >> 20) +
                     " MiB are free on CUDA device " + std::to_string(settings.cuda_device));
  }
  return make_lattice_engine<CudaExec>(settings);
}

}  // namespace lattica

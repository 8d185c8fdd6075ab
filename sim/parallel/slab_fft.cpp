#include "sim/parallel/slab_fft.hpp"

#include <algorithm>

#include "kernels/backend/cpu_exec.hpp"
#include "sim/parallel/slab_fft_impl.hpp"

namespace lattica {

int64_t AxisSplit::first(int part) const {
  const int64_t base = extent / parts, extra = extent % parts;
  return part * base + std::min<int64_t>(part, extra);
}

int64_t AxisSplit::count(int part) const {
  return extent / parts + (part < extent % parts ? 1 : 0);
}

template class SlabFft<CpuExec>;

}  // namespace lattica

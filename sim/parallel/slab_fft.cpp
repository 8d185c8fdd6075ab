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

bool slab_columns_fit(const std::vector<int64_t>& dims, int rank, int ranks) {
  const int64_t row_modes = half_spectrum_size(dims.data() + 1, static_cast<int>(dims.size()) - 1);
  const AxisSplit rows{dims[0], ranks}, modes{row_modes, ranks};
  return dims[0] * modes.count(rank) <= rows.count(rank) * row_modes;
}

template class SlabFft<CpuExec>;

}  // namespace lattica

#include "sim/parallel/box_slabs.hpp"

#include "kernels/backend/cpu_exec.hpp"
#include "sim/parallel/box_slabs_impl.hpp"

namespace lattica {

template class BoxSlabs<CpuExec>;

}  // namespace lattica

#pragma once
// Local site updates of the packed Ising storage: Metropolis and heat-bath entries, 32 spins
// of one colour per thread (sim/engine/packed_ising.hpp), the byte kernels' chain bit for bit.
// The last entry of a sweep can also take the measurement that follows it.

#include <cstdint>

#include "kernels/models/ising.hpp"
#include "sim/engine/packed_ising.hpp"
#include "sim/engine/pass.hpp"

namespace lattica {

template <class Exec, int D>
class PackedSitePass final : public Pass<Exec, D, IsingModel, PackedIsing<Exec, D>> {
 public:
  explicit PackedSitePass(const PassContext<Exec, D, IsingModel, PackedIsing<Exec, D>>& context)
      : storage_(context.storage), params_(context.params) {}

  bool handles(UpdateAlgorithm algorithm) const override {
    return !is_whole_lattice(algorithm) && !is_cluster(algorithm);
  }

  void run(UpdateAlgorithm algorithm, uint32_t index, uint64_t sweep, bool,
           IsingSums* sums) override {
    storage_.update(params_, algorithm, index, sweep, sums);
  }

  bool fuses_measurement() const override { return true; }

 private:
  PackedIsing<Exec, D>& storage_;
  const IsingParams& params_;
};

}  // namespace lattica

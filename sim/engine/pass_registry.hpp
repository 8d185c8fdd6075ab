#pragma once
// The one place that knows which pass runs an entry of update.sequence. A new family of moves
// registers here: its pass class (sim/engine/passes/) and the condition under which it runs.

#include <memory>

#include "sim/engine/pass.hpp"
#include "sim/engine/passes/cluster_pass.hpp"
#include "sim/engine/passes/langevin_pass.hpp"
#include "sim/engine/passes/local_site_pass.hpp"
#include "sim/engine/passes/packed_site_pass.hpp"

namespace lattica {

/// A new pass for entries of `algorithm` on the storage of `context`.
template <class Exec, int D, class Model, class Storage>
std::unique_ptr<Pass<Exec, D, Model, Storage>> make_pass(
    UpdateAlgorithm algorithm, const PassContext<Exec, D, Model, Storage>& context) {
  if (is_whole_lattice(algorithm)) {
    if constexpr (Model::kFourierLangevin && !Storage::kPacked) {
      return std::make_unique<LangevinPass<Exec, D, Model>>(context);
    } else {
      throw InputError("update.algorithm: langevin and mala are for phi^4 only");
    }
  }
  if (is_cluster(algorithm)) return std::make_unique<ClusterPass<Exec, D, Model, Storage>>(context);
  if constexpr (Storage::kPacked) {
    return std::make_unique<PackedSitePass<Exec, D>>(context);
  } else {
    return std::make_unique<LocalSitePass<Exec, D, Model>>(context);
  }
}

}  // namespace lattica

#pragma once
// Definitions of the per-family engine factories declared in sim/engine/engine_factory.hpp.
// Only the files that instantiate them (sim/engine/engines_<backend>_<family>) include this.

#include <memory>
#include <string>
#include <type_traits>

#include "sim/engine/engine_factory.hpp"
#include "sim/engine/lattice_engine.hpp"
#include "sim/engine/model_params.hpp"
#include "sim/engine/packed_ising.hpp"
#include "sim/engine/site_storage.hpp"

namespace lattica {

/// The engine of one model and dimension: Ising spins packed where the lattice allows.
template <class Exec, int D, class Model>
std::unique_ptr<Engine> make_engine_in(const EngineSettings& settings) {
  if constexpr (std::is_same_v<Model, IsingModel>) {
    if (uses_packed_ising(settings)) {
      return std::make_unique<LatticeEngine<Exec, D, Model, PackedIsing<Exec, D>>>(settings);
    }
  }
  return std::make_unique<LatticeEngine<Exec, D, Model, SiteStorage<Exec, D, Model>>>(settings);
}

/// The engine of one model for the lattice dimension in settings.
template <class Exec, class Model>
std::unique_ptr<Engine> make_engine_for(const EngineSettings& settings) {
  switch (settings.dims.size()) {
    case 1:
      return make_engine_in<Exec, 1, Model>(settings);
    case 2:
      return make_engine_in<Exec, 2, Model>(settings);
    case 3:
      return make_engine_in<Exec, 3, Model>(settings);
    case 4:
      return make_engine_in<Exec, 4, Model>(settings);
    default:
      throw InputError("lattice.dims: 1 to 4 dimensions are supported");
  }
}

template <class Exec>
std::unique_ptr<Engine> make_discrete_engine(const EngineSettings& settings) {
  if (settings.model == ModelKind::potts) return make_engine_for<Exec, PottsModel>(settings);
  return make_engine_for<Exec, IsingModel>(settings);
}

template <class Exec, class Real>
std::unique_ptr<Engine> make_on_engine(const EngineSettings& settings) {
  switch (settings.n) {
    case 2:
      return make_engine_for<Exec, OnModel<Real, 2>>(settings);
    case 3:
      return make_engine_for<Exec, OnModel<Real, 3>>(settings);
    case 4:
      return make_engine_for<Exec, OnModel<Real, 4>>(settings);
    default:
      throw InputError("model.n = " + std::to_string(settings.n) +
                       ": O(n) models are built for n = 2, 3 and 4");
  }
}

template <class Exec>
std::unique_ptr<Engine> make_phi4_engine(const EngineSettings& settings) {
  return settings.precision == Precision::float32
             ? make_engine_for<Exec, Phi4Model<float>>(settings)
             : make_engine_for<Exec, Phi4Model<double>>(settings);
}

}  // namespace lattica

#pragma once
// Definitions of the per-family engine factories declared in sim/lattice_engine.hpp. Only the
// files that instantiate them (sim/engine_<backend>_<family>) include this header.

#include <memory>
#include <string>

#include "sim/lattice_engine.hpp"

namespace lattica {

template <class Exec>
std::unique_ptr<Engine> make_discrete_engine(const EngineSettings& settings) {
  if (settings.model == ModelKind::potts) return make_engine_for<Exec, PottsModel>(settings);
  return make_engine_for<Exec, IsingModel>(settings);
}

template <class Exec, class Real>
std::unique_ptr<Engine> make_on_engine_in(const EngineSettings& settings) {
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
std::unique_ptr<Engine> make_on_engine(const EngineSettings& settings) {
  return settings.precision == Precision::float32 ? make_on_engine_in<Exec, float>(settings)
                                                  : make_on_engine_in<Exec, double>(settings);
}

template <class Exec>
std::unique_ptr<Engine> make_phi4_engine(const EngineSettings& settings) {
  return settings.precision == Precision::float32
             ? make_engine_for<Exec, Phi4Model<float>>(settings)
             : make_engine_for<Exec, Phi4Model<double>>(settings);
}

}  // namespace lattica

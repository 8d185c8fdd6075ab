#pragma once
// Which LatticeEngine a run gets: one per model, dimension and storage. The engines of one
// model family are compiled in their own file per backend (sim/engine/engines_<backend>_*),
// which instantiates that family's factory below from sim/engine/engine_builders.hpp; this
// header only declares them, so the dispatch compiles none of them.

#include <memory>
#include <string>

#include "sim/engine/engine.hpp"

namespace lattica {

template <class Exec>
std::unique_ptr<Engine> make_discrete_engine(const EngineSettings& settings);  ///< Ising, Potts
template <class Exec, class Real>
std::unique_ptr<Engine> make_on_engine(const EngineSettings& settings);
template <class Exec>
std::unique_ptr<Engine> make_phi4_engine(const EngineSettings& settings);

/// The engine for the model, precision and dimension in settings.
template <class Exec>
std::unique_ptr<Engine> make_lattice_engine(const EngineSettings& settings) {
  if (settings.replicas < 1 || settings.replicas > static_cast<int>(kMaxReplicas) ||
      settings.measurement_capacity < 1) {
    throw InputError("run.replicas: must be between 1 and " + std::to_string(kMaxReplicas));
  }
  const bool single = settings.precision == Precision::float32;
  switch (settings.model) {
    case ModelKind::ising:
    case ModelKind::potts:
      return make_discrete_engine<Exec>(settings);
    case ModelKind::on:
      return single ? make_on_engine<Exec, float>(settings)
                    : make_on_engine<Exec, double>(settings);
    case ModelKind::phi4:
      return make_phi4_engine<Exec>(settings);
  }
  throw InputError("model.kind: unknown model");
}

}  // namespace lattica

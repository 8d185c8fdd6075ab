#include "sim/output/multicanonical_output.hpp"

#include <utility>

#include "sim/output/hdf5.hpp"
#include "sim/output/results.hpp"

namespace lattica {

void write_multicanonical(hid_t root, const MulticanonicalRecord& r) {
  if (H5_CHECK(H5Lexists(root, "multicanonical", H5P_DEFAULT)) > 0)
    H5_CHECK(H5Ldelete(root, "multicanonical", H5P_DEFAULT));
  const H5Id group = create_group(root, "multicanonical");
  const hid_t g = group.get();
  write_string_attribute(g, "model", r.model);
  write_string_attribute(g, "initial_weights", r.initial_weights);
  write_string_attribute(g, "coupling", r.coupling);
  const std::pair<const char*, int64_t> integers[] = {
      {"q", r.q},
      {"n", r.n},
      {"volume", r.volume},
      {"walkers", r.walkers},
      {"stages", r.stages},
      {"converged", r.converged ? 1 : 0},
      {"sweeps_per_iteration", r.sweeps_per_iteration},
      {"wang_landau_sweeps", r.wang_landau_sweeps},
      {"thermalization", r.thermalization},
      {"measure_every", r.measure_every},
      {"window_first_bin", r.window_first_bin},
      {"window_last_bin", r.window_last_bin},
      {"refine_iterations", r.refine_iterations},
      {"refine_sweeps", r.refine_sweeps}};
  for (const auto& [name, value] : integers) set_int64_attribute(g, name, value);
  const std::pair<const char*, double> numbers[] = {{"lnf_initial", r.lnf_initial},
                                                    {"lnf_final", r.lnf_final},
                                                    {"flatness", r.flatness},
                                                    {"lnf_reached", r.lnf_reached},
                                                    {"coupling_value", r.coupling_value},
                                                    {"bin_low", r.bin_low},
                                                    {"bin_width", r.bin_width},
                                                    {"refine_prior_weight", r.refine_prior_weight},
                                                    {"histogram_seconds", r.histogram_seconds},
                                                    {"seconds", r.seconds}};
  for (const auto& [name, value] : numbers) replace_double_attribute(g, name, value);
  write_vector(g, "energy", r.energy,
               "total energy E of each bin (Ising, Potts: bin k has k satisfied bonds; O(n), "
               "phi^4: the bin's centre, NaN for the bins below and above the window)");
  write_vector(
      g, "wang_landau_log_g", r.wang_landau_log_g,
      "ln g(E) from Wang-Landau, up to a constant; the initial estimate where never visited");
  write_vector(g, "visited", r.visited, "1 where Wang-Landau visited the bin");
  write_vector(g, "log_weight", r.log_weight,
               "the frozen multicanonical ln W(E) of the production (acceptance min(1, W'/W)), "
               "Wang-Landau's or, after refine_iterations > 0, the refinement's; NaN outside the "
               "window");
  if (!r.refine_pair_weight.empty()) {
    write_vector(g, "refine_pair_weight", r.refine_pair_weight,
                 "refinement: the summed weights H H' / (H + H') of every walker and iteration "
                 "for the difference of ln g between the bin and the next bin Wang-Landau "
                 "visited (0 for the last and unvisited bins; refine_prior_weight is added)");
  }
  write_vector(g, "histogram", r.histogram,
               "production: (walker, sweep) pairs that ended a sweep in the bin");
  write_vector(g, "sweep", r.sweeps,
               "sweeps done (Wang-Landau and refinement included) at each measurement");
  const std::vector<hsize_t> shape = {static_cast<hsize_t>(r.sweeps.size()),
                                      static_cast<hsize_t>(r.walkers)};
  write_array(g, "energy_series", r.energy_series, shape, "[measurement, walker]: total energy E");
  write_array(g, "order_series", r.order_series, shape,
              "[measurement, walker]: Ising sum of spins; Potts sites in the most common state; "
              "O(n) |sum of spins|; phi^4 sum of phi");
}

}  // namespace lattica

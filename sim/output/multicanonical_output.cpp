#include "sim/output/multicanonical_output.hpp"

#include "sim/output/hdf5.hpp"
#include "sim/output/results.hpp"

namespace lattica {

void write_multicanonical(hid_t root, const MulticanonicalRecord& r) {
  if (H5_CHECK(H5Lexists(root, "multicanonical", H5P_DEFAULT)) > 0)
    H5_CHECK(H5Ldelete(root, "multicanonical", H5P_DEFAULT));
  const H5Id group = create_group(root, "multicanonical");
  const hid_t g = group.get();
  write_string_attribute(g, "model", r.model);
  set_int64_attribute(g, "q", r.q);
  set_int64_attribute(g, "volume", r.volume);
  set_int64_attribute(g, "walkers", r.walkers);
  replace_double_attribute(g, "lnf_initial", r.lnf_initial);
  replace_double_attribute(g, "lnf_final", r.lnf_final);
  replace_double_attribute(g, "flatness", r.flatness);
  replace_double_attribute(g, "lnf_reached", r.lnf_reached);
  set_int64_attribute(g, "stages", r.stages);
  set_int64_attribute(g, "converged", r.converged ? 1 : 0);
  set_int64_attribute(g, "sweeps_per_iteration", r.sweeps_per_iteration);
  set_int64_attribute(g, "wang_landau_sweeps", r.wang_landau_sweeps);
  set_int64_attribute(g, "thermalization", r.thermalization);
  set_int64_attribute(g, "measure_every", r.measure_every);
  replace_double_attribute(g, "histogram_seconds", r.histogram_seconds);
  replace_double_attribute(g, "seconds", r.seconds);
  write_vector(g, "energy", r.energy, "total energy E of each bin (bin k: k satisfied bonds)");
  write_vector(g, "wang_landau_log_g", r.wang_landau_log_g,
               "ln g(E) from Wang-Landau, up to a constant; 0 where never visited");
  write_vector(g, "visited", r.visited, "1 where Wang-Landau visited the bin");
  write_vector(g, "log_weight", r.log_weight,
               "the frozen multicanonical ln W(E) of the production (acceptance min(1, W'/W))");
  write_vector(g, "histogram", r.histogram,
               "production: (walker, sweep) pairs that ended a sweep in the bin");
  write_vector(g, "sweep", r.sweeps, "sweeps done (Wang-Landau included) at each measurement");
  const std::vector<hsize_t> shape = {static_cast<hsize_t>(r.sweeps.size()),
                                      static_cast<hsize_t>(r.walkers)};
  write_array(g, "energy_series", r.energy_series, shape, "[measurement, walker]: total energy E");
  write_array(g, "order_series", r.order_series, shape,
              "[measurement, walker]: Ising sum of spins; Potts sites in the most common state");
}

}  // namespace lattica

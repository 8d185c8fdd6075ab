#include "sim/output/annealing_output.hpp"

#include <utility>

#include "sim/output/hdf5.hpp"

namespace lattica {

namespace {

/// Steps per chunk of the per-step columns (a step's row is small); per-replica columns are
/// chunked one step at a time.
constexpr hsize_t kStepsPerChunk = 64;

std::vector<Column> annealing_columns(const AnnealingLayout& l) {
  const hsize_t populations = static_cast<hsize_t>(l.populations);
  std::vector<Column> c = {
      make_column("step", H5T_NATIVE_INT64, {}, kStepsPerChunk, "index in the schedule"),
      make_column("beta", H5T_NATIVE_DOUBLE, {}, kStepsPerChunk, "inverse temperature"),
      make_column("sweeps", H5T_NATIVE_INT64, {}, kStepsPerChunk, "sweeps of every replica so far"),
      make_column("log_z", H5T_NATIVE_DOUBLE, {populations}, kStepsPerChunk,
                  "each population's estimate of ln Z (whole lattice)"),
      make_column("beta_free_energy", H5T_NATIVE_DOUBLE, {}, kStepsPerChunk,
                  "beta F per site, -(mean over populations of ln Z) / V"),
      make_column("families", H5T_NATIVE_INT64, {}, kStepsPerChunk,
                  "distinct ancestors (replicas of step 0) still present"),
      make_column("rho_t", H5T_NATIVE_DOUBLE, {}, kStepsPerChunk,
                  "R sum_i nu_i^2 over the families i (fractions nu_i of their population), "
                  "averaged over populations"),
      make_column("effective_population", H5T_NATIVE_DOUBLE, {}, kStepsPerChunk,
                  "sum over populations of (sum w)^2 / sum w^2 of the step's weights"),
      make_column("resampling_seconds", H5T_NATIVE_DOUBLE, {}, kStepsPerChunk,
                  "wall-clock seconds of the weights, plan and gather"),
      make_column("step_seconds", H5T_NATIVE_DOUBLE, {}, kStepsPerChunk,
                  "wall-clock seconds of the whole step")};
  for (const std::string& name : l.observables) {
    c.push_back(make_column(name, H5T_NATIVE_DOUBLE, {3}, kStepsPerChunk,
                            "population mean of x, |x|, x^2"));
    c.push_back(make_column(name + "_std", H5T_NATIVE_DOUBLE, {3}, kStepsPerChunk,
                            "population standard deviation of x, |x|, x^2"));
  }
  if (!l.replica_output) return c;
  const hsize_t replicas = static_cast<hsize_t>(l.replicas);
  for (const std::string& name : l.observables)
    c.push_back(make_column("replica_" + name, H5T_NATIVE_DOUBLE, {replicas}, 1, "per replica"));
  c.push_back(
      make_column("family", H5T_NATIVE_INT32, {replicas}, 1, "each replica's ancestor at step 0"));
  return c;
}

}  // namespace

AnnealingOutput::AnnealingOutput(OutputFile& file, AnnealingLayout layout)
    : file_(file),
      layout_(std::move(layout)),
      series_(&file_.create_series("annealing", annealing_columns(layout_))) {
  const hid_t group = series_->group();
  set_int64_attribute(group, "replicas", layout_.replicas);
  set_int64_attribute(group, "populations", layout_.populations);
  set_int64_attribute(group, "sweeps_per_step", layout_.sweeps_per_step);
  set_int64_attribute(group, "volume", layout_.volume);
  replace_double_attribute(group, "log_z0", layout_.log_z0);
  write_string_attribute(group, "resampling", layout_.resampling);
}

void AnnealingOutput::append(const AnnealingStep& s) {
  std::vector<const void*> row = {
      &s.step,     &s.beta,  &s.sweeps_done,          s.log_z.data(),        &s.beta_free_energy,
      &s.families, &s.rho_t, &s.effective_population, &s.resampling_seconds, &s.step_seconds};
  for (size_t o = 0; o < layout_.observables.size(); ++o) {
    row.push_back(s.mean.data() + 3 * o);
    row.push_back(s.spread.data() + 3 * o);
  }
  std::vector<std::vector<double>> per_replica;  // [observable][replica]
  if (layout_.replica_output) {
    const size_t n = layout_.observables.size();
    const auto replicas = static_cast<size_t>(layout_.replicas);
    per_replica.assign(n, std::vector<double>(replicas));
    for (size_t r = 0; r < replicas; ++r) {
      for (size_t o = 0; o < n; ++o) per_replica[o][r] = (*s.values)[r * n + o];
    }
    for (const std::vector<double>& column : per_replica) row.push_back(column.data());
    row.push_back(s.family->data());
  }
  series_->append(1, row);
}

}  // namespace lattica

#include "sim/output/results.hpp"

#include <type_traits>
#include <utility>

#include "sim/engine/tempering_ladder.hpp"
#include "sim/output/hdf5.hpp"

namespace lattica {

void write_histograms(hid_t file, const std::vector<ExactHistogram>& histograms) {
  int64_t bytes = 0;  // values and counts, 8 bytes each
  for (const ExactHistogram& h : histograms) bytes += 16 * static_cast<int64_t>(h.counts.size());
  reserve_file_space(file, bytes);
  if (H5_CHECK(H5Lexists(file, "histograms", H5P_DEFAULT)) > 0) {
    H5_CHECK(H5Ldelete(file, "histograms", H5P_DEFAULT));
  }
  H5Id group = create_group(file, "histograms");
  for (const ExactHistogram& h : histograms) {
    H5Id sub = create_group(group.get(), h.name.c_str());
    write_string_attribute(sub.get(), "description", h.description);
    set_int64_attribute(sub.get(), "committed_length", h.samples);
    std::vector<long long> values, number;
    for (const auto& [v, c] : h.counts) {
      values.push_back(v);
      number.push_back(c);
    }
    const hsize_t n = values.size();
    for (const auto& [name, data] :
         {std::pair<const char*, const std::vector<long long>*>{"values", &values},
          {"counts", &number}}) {
      H5Id space(H5_CHECK(H5Screate_simple(1, &n, nullptr)), H5Sclose);
      H5Id set(H5_CHECK(H5Dcreate2(sub.get(), name, H5T_NATIVE_INT64, space.get(), H5P_DEFAULT,
                                   H5P_DEFAULT, H5P_DEFAULT)),
               H5Dclose);
      if (n > 0)
        H5_CHECK(
            H5Dwrite(set.get(), H5T_NATIVE_LLONG, H5S_ALL, H5S_ALL, H5P_DEFAULT, data->data()));
    }
  }
}

template <class T>
void write_array(hid_t parent, const char* name, const std::vector<T>& values,
                 const std::vector<hsize_t>& shape, const std::string& description) {
  static_assert(std::is_same_v<T, double> || std::is_same_v<T, int64_t> ||
                std::is_same_v<T, int32_t>);
  const hid_t type = std::is_same_v<T, double>    ? H5T_NATIVE_DOUBLE
                     : std::is_same_v<T, int64_t> ? H5T_NATIVE_INT64
                                                  : H5T_NATIVE_INT32;
  reserve_file_space(parent, static_cast<int64_t>(values.size() * sizeof(T)));
  if (H5_CHECK(H5Lexists(parent, name, H5P_DEFAULT)) > 0)
    H5_CHECK(H5Ldelete(parent, name, H5P_DEFAULT));
  H5Id space(H5_CHECK(H5Screate_simple(static_cast<int>(shape.size()), shape.data(), nullptr)),
             H5Sclose);
  H5Id set(
      H5_CHECK(H5Dcreate2(parent, name, type, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)),
      H5Dclose);
  if (!values.empty())
    H5_CHECK(H5Dwrite(set.get(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()));
  write_string_attribute(set.get(), "description", description);
}
template void write_array(hid_t, const char*, const std::vector<double>&,
                          const std::vector<hsize_t>&, const std::string&);
template void write_array(hid_t, const char*, const std::vector<int64_t>&,
                          const std::vector<hsize_t>&, const std::string&);
template void write_array(hid_t, const char*, const std::vector<int32_t>&,
                          const std::vector<hsize_t>&, const std::string&);

template <class T>
void write_vector(hid_t parent, const char* name, const std::vector<T>& values,
                  const std::string& description) {
  write_array(parent, name, values, {static_cast<hsize_t>(values.size())}, description);
}
template void write_vector(hid_t, const char*, const std::vector<double>&, const std::string&);
template void write_vector(hid_t, const char*, const std::vector<int64_t>&, const std::string&);
template void write_vector(hid_t, const char*, const std::vector<int32_t>&, const std::string&);

namespace {

/// A new, empty group `name` under `group`, in place of one written before.
H5Id fresh_group(hid_t group, const char* name) {
  if (H5_CHECK(H5Lexists(group, name, H5P_DEFAULT)) > 0)
    H5_CHECK(H5Ldelete(group, name, H5P_DEFAULT));
  return create_group(group, name);
}

}  // namespace

void write_tempering_statistics(hid_t group, const TemperingState& t) {
  H5Id stats = fresh_group(group, "statistics");
  std::vector<double> acceptance;
  for (size_t k = 0; k < t.attempts.size(); ++k) {
    acceptance.push_back(t.attempts[k] > 0 ? static_cast<double>(t.accepts[k]) /
                                                 static_cast<double>(t.attempts[k])
                                           : -1.0);
  }
  const std::vector<double> up_fraction = up_fractions(t);
  const hid_t g = stats.get();
  write_vector(g, "pair_attempts", t.attempts, "exchanges tried between rungs k and k + 1");
  write_vector(g, "pair_accepts", t.accepts, "exchanges taken between rungs k and k + 1");
  write_vector(g, "pair_acceptance", acceptance, "pair_accepts / pair_attempts (-1: none tried)");
  write_vector(g, "round_trip_sweeps", t.round_trip_sweeps,
               "sweeps of every completed round trip (bottom rung to the top and back), in the "
               "order they completed");
  write_vector(g, "up_visits", t.up_visits,
               "exchange rounds a configuration last at the bottom rung held rung k");
  write_vector(g, "down_visits", t.down_visits,
               "exchange rounds a configuration last at the top rung held rung k");
  write_vector(g, "up_fraction", up_fraction,
               "f(k) = up / (up + down), the diffusion profile the ladder feedback flattens "
               "(-1: never visited by a labelled configuration)");
  write_vector(g, "rung_of_slot", t.rung_of_slot, "the rung of each replica slot now");
}

void write_tempering_feedback(hid_t group, const std::string& coupling, const TemperingState& t) {
  write_vector(group, coupling.c_str(), t.ladder,
               "the coupling of every rung, rung order: the feedback-optimised ladder in use");
  H5Id feedback = fresh_group(group, "feedback");
  const hsize_t rungs = t.ladder.size(), steps = t.feedback_ladders.size() / rungs;
  write_array(feedback.get(), "up_fraction", t.feedback_up_fraction, {steps, rungs},
              "f(k) of every feedback step, from the visits since the step before (-1: none; "
              "a step with one leaves the ladder as it was)");
  write_array(feedback.get(), "ladders", t.feedback_ladders, {steps, rungs},
              "the ladder each feedback step made from its f(k)");
}

void write_step_tuning(hid_t root, const StepTuning& tuning) {
  std::vector<std::pair<const char*, double>> values;
  if (tuning.applies) {
    values.push_back({"metropolis_step", tuning.step});
    values.push_back({"metropolis_acceptance", tuning.acceptance});
  }
  if (tuning.langevin) {
    values.push_back({"langevin_step", tuning.langevin_step});
    values.push_back({"langevin_shift", tuning.langevin_shift});
    if (tuning.adjusted) values.push_back({"mala_acceptance", tuning.langevin_acceptance});
  }
  for (const auto& [name, value] : values) replace_double_attribute(root, name, value);
}

}  // namespace lattica

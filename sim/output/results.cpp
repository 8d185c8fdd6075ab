#include "sim/output/results.hpp"

#include <utility>

#include "sim/output/hdf5.hpp"

namespace lattica {

void write_histograms(hid_t file, const std::vector<ExactHistogram>& histograms) {
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

#include "sim/output/correlator_output.hpp"

#include <algorithm>
#include <string>
#include <tuple>

#include "kernels/spectral/timeslice.hpp"
#include "sim/correlators.hpp"
#include "sim/output/hdf5.hpp"
#include "sim/output/results.hpp"

namespace lattica {

namespace {

/// The columns of the structure factor's series.
std::vector<Column> series_columns(int replicas) {
  const std::vector<hsize_t> row = replica_axis(replicas);
  return {
      make_column("s0", H5T_NATIVE_DOUBLE, row, 1024,
                  "S(0) = |sum_x phi(x)|^2 / V of this measurement (summed over components)"),
      make_column("s_min", H5T_NATIVE_DOUBLE, row, 1024,
                  "S(k_min): the mean of S over the unit momenta 2 pi / L along the longest axes"),
      make_column(
          "xi2", H5T_NATIVE_DOUBLE, row, 1024,
          "second-moment correlation length of this measurement, sqrt(S(0)/S(k_min) - 1) / "
          "(2 sin(pi / L)); NaN where S(0) <= S(k_min). Prefer xi2 from the averages of s0 and "
          "s_min (a per-measurement ratio is biased)"),
      make_column("sweep", H5T_NATIVE_INT64, {}, 1024)};
}

/// The columns of the time-slice correlators: C of rows [R,] T, n_p, and the sweeps.
std::vector<Column> timeslice_columns(const std::vector<int64_t>& dims, int replicas,
                                      int momenta_per_axis) {
  const int spatial = static_cast<int>(dims.size()) - 1;
  const size_t momenta = timeslice_momenta(spatial + 1, momenta_per_axis).size();
  std::vector<hsize_t> row = replica_axis(replicas);
  row.push_back(static_cast<hsize_t>(dims.back()));
  row.push_back(spatial > 0 ? momenta / spatial : 1);
  return {make_column("C", H5T_NATIVE_DOUBLE, row, 16,
                      "C(dt, p) = (1/(T V_s)) sum_t sum_c Re[O_c(t + dt, p) conj(O_c(t, p))], "
                      "O_c(t, p) = sum_x phi_c(x, t) exp(-i p.x); the last lattice axis is time; "
                      "per measurement [, replica], dt = 0 .. T-1 (periodic), momentum index"),
          make_column("sweep", H5T_NATIVE_INT64, {}, 1024)};
}

/// Writes rows first .. first + count - 1 of axis 0 of the double dataset `name` under `group`.
void write_rows(hid_t group, const char* name, int64_t first, int64_t count, const double* data) {
  if (count == 0) return;
  H5Id set(H5_CHECK(H5Dopen2(group, name, H5P_DEFAULT)), H5Dclose);
  H5Id file_space(H5_CHECK(H5Dget_space(set.get())), H5Sclose);
  const int rank = H5_CHECK(H5Sget_simple_extent_ndims(file_space.get()));
  std::vector<hsize_t> start(static_cast<size_t>(rank), 0), extents(static_cast<size_t>(rank));
  H5_CHECK(H5Sget_simple_extent_dims(file_space.get(), extents.data(), nullptr));
  // The first write places the whole (contiguous) dataset.
  if (H5Dget_storage_size(set.get()) == 0)
    reserve_file_space(group, bytes_of(H5T_NATIVE_DOUBLE, extents));
  start[0] = static_cast<hsize_t>(first);
  extents[0] = static_cast<hsize_t>(count);
  H5_CHECK(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr,
                               extents.data(), nullptr));
  H5Id memory(H5_CHECK(H5Screate_simple(rank, extents.data(), nullptr)), H5Sclose);
  H5_CHECK(
      H5Dwrite(set.get(), H5T_NATIVE_DOUBLE, memory.get(), file_space.get(), H5P_DEFAULT, data));
}

/// The tables written by rows of axis 0, with their parts of StructureFactorTables.
struct RowTable {
  const char* name;
  bool half;  ///< on the half spectrum (else on the lattice)
  const std::vector<double> StructureFactorTables::*values;
  const char* description;
};
const RowTable kRowTables[] = {
    {"S", true, &StructureFactorTables::s,
     "<S(k)>, S(k) = sum_c |sum_x phi_c(x) exp(-i k.x)|^2 / V, on the half spectrum of a real "
     "FFT (last axis L/2 + 1 modes; S(-k) = S(k)); momenta in momentum_<axis>"},
    {"S_error", true, &StructureFactorTables::s_error,
     "standard error of S(k), treating the samples as independent (true when measurements are "
     "further apart than the autocorrelation time)"},
    {"S_connected", true, &StructureFactorTables::s_connected,
     "S(k) - V |<m>|^2 delta_{k,0}: the connected structure factor (differs from S only at "
     "k = 0, and only where the phase is ordered)"},
    {"G", false, &StructureFactorTables::g,
     "G(r) = (1/V) sum_x <phi(x) . phi(x + r)> by inverse FFT of <S(k)> (Wiener-Khinchin); "
     "distances r_a = 0 .. L_a - 1 (periodic) along each axis"},
    {"G_connected", false, &StructureFactorTables::g_connected, "G(r) - |<m>|^2"},
};

/// Says on a series' group how many replicas each of its columns averages (ladder_means).
void write_averaged_over(hid_t group, int ladders) {
  if (ladders <= 1) return;
  const int64_t averaged = ladders;
  write_numeric_attribute(group, "averaged_over", H5T_NATIVE_INT64, &averaged, 1, true);
}

}  // namespace

std::vector<double> ladder_means(const std::vector<double>& values, int64_t count, int replicas,
                                 int ladders, size_t block) {
  const auto width = static_cast<size_t>(replicas / ladders);
  std::vector<double> means(static_cast<size_t>(count) * width * block, 0.0);
  for (size_t j = 0; j < static_cast<size_t>(count); ++j) {
    for (size_t k = 0; k < width; ++k) {
      double* mean = &means[(j * width + k) * block];
      for (size_t l = 0; l < static_cast<size_t>(ladders); ++l) {
        const double* v = &values[(j * static_cast<size_t>(replicas) + l * width + k) * block];
        for (size_t e = 0; e < block; ++e) mean[e] += v[e];
      }
      for (size_t e = 0; e < block; ++e) mean[e] /= static_cast<double>(ladders);
    }
  }
  return means;
}

void StructureFactorOutput::create(hid_t correlators, const std::vector<int64_t>& dims,
                                   int replicas, int64_t every, int ladders) {
  dims_ = dims;
  replicas_ = replicas;
  ladders_ = ladders;
  group_ = create_group(correlators, "structure_factor");
  write_numeric_attribute(group_.get(), "every", H5T_NATIVE_INT64, &every, 1, true);
  series_ = RecordSeries::create(group_.get(), "series", series_columns(replicas / ladders));
  write_averaged_over(series_.group(), ladders);
}

void StructureFactorOutput::open(hid_t file, const std::vector<int64_t>& dims, int replicas,
                                 int64_t rows, int ladders) {
  dims_ = dims;
  replicas_ = replicas;
  ladders_ = ladders;
  group_ = open_group(file, "correlators/structure_factor");
  series_ = RecordSeries::open(group_.get(), "series", series_columns(replicas / ladders), rows);
}

void StructureFactorOutput::append(const std::vector<int64_t>& sweeps,
                                   const std::vector<double>& values) {
  const auto count = static_cast<int64_t>(sweeps.size());
  if (count == 0) return;
  const int64_t longest_axis = *std::max_element(dims_.begin(), dims_.end());
  // Every replica's values as they are, or (means mode) their means.
  const std::vector<double> means =
      ladders_ > 1 ? ladder_means(values, count, replicas_, ladders_, 2) : std::vector<double>{};
  const std::vector<double>& columns = ladders_ > 1 ? means : values;
  const size_t rows = static_cast<size_t>(count) * static_cast<size_t>(replicas_ / ladders_);
  std::vector<double> s0(rows), s_min(rows), xi2(rows);
  for (size_t i = 0; i < rows; ++i) {
    s0[i] = columns[2 * i];
    s_min[i] = columns[2 * i + 1];
    xi2[i] = second_moment_length(s0[i], s_min[i], longest_axis);
  }
  series_.append(count, {s0.data(), s_min.data(), xi2.data(), sweeps.data()});
}

void StructureFactorOutput::write_averages(const StructureFactorTables& t) {
  if (t.samples == 0) return;
  const hid_t group = group_.get();
  const std::vector<hsize_t> half(t.spectrum_shape.begin(), t.spectrum_shape.end());
  const std::vector<hsize_t> full(dims_.begin(), dims_.end());
  const bool whole = t.first_row == 0 && t.rows == dims_[0];  // one process's tables
  for (const RowTable& table : kRowTables) {  // decomposed: the datasets now, the rows after
    if (t.per_mode) {
      write_array(group, table.name, whole ? t.*table.values : std::vector<double>{},
                  table.half ? half : full, table.description);
    } else if (H5_CHECK(H5Lexists(group, table.name, H5P_DEFAULT)) > 0) {
      H5_CHECK(H5Ldelete(group, table.name, H5P_DEFAULT));  // an earlier end's, now stale
    }
  }
  if (t.per_mode && !whole) write_average_rows(t);
  replace_string_attribute(group, "tables", t.per_mode ? "full" : "radial");
  for (size_t a = 0; a < t.momenta.size(); ++a) {
    write_vector(group, ("momentum_" + std::to_string(a)).c_str(), t.momenta[a],
                 "k_a = 2 pi n / L_a of each index along axis " + std::to_string(a));
  }
  write_vector(group, "radial_k", t.radial_k, "mean |k| of each shell of width 2 pi / L_max");
  write_vector(group, "radial_S", t.radial_s,
               "<S> averaged over the modes of each shell (the full lattice's modes)");
  write_vector(group, "radial_modes", t.radial_modes, "number of lattice momenta in each shell");
  write_vector(group, "mean_field", t.mean_field,
               "<m_c> = <(1/V) sum_x phi_c(x)> per order-parameter component");
  set_int64_attribute(group, "samples", t.samples);
  set_int64_attribute(group, "components", t.components);
  replace_double_attribute(group, "xi2", t.xi2);
}

void StructureFactorOutput::write_average_rows(const StructureFactorTables& rows) {
  for (const RowTable& table : kRowTables)
    write_rows(group_.get(), table.name, rows.first_row, rows.rows, (rows.*table.values).data());
}

void StructureFactorOutput::close() {
  series_.close();
  group_.reset();
}

void StructureFactorOutput::detach() {
  if (!exists()) return;
  series_.detach();
  H5_CHECK(H5Gclose(group_.release()));
  detached_ = true;
}

void StructureFactorOutput::attach(hid_t file) {
  if (!detached_) return;
  group_ = open_group(file, "correlators/structure_factor");
  series_.attach(file);
  detached_ = false;
}

/// Values per replica and measurement of the time-slice series: T x (momenta).
size_t timeslice_block(const std::vector<int64_t>& dims, int momenta_per_axis) {
  const int spatial = static_cast<int>(dims.size()) - 1;
  const size_t momenta = timeslice_momenta(spatial + 1, momenta_per_axis).size();
  return static_cast<size_t>(dims.back()) * (spatial > 0 ? momenta / spatial : 1);
}

void TimesliceOutput::create(hid_t correlators, const std::vector<int64_t>& dims, int replicas,
                             int64_t every, int momenta_per_axis, int ladders) {
  replicas_ = replicas;
  ladders_ = ladders;
  block_ = timeslice_block(dims, momenta_per_axis);
  series_ = RecordSeries::create(correlators, "timeslice",
                                 timeslice_columns(dims, replicas / ladders, momenta_per_axis));
  const hid_t group = series_.group();
  write_averaged_over(group, ladders);
  const int spatial = static_cast<int>(dims.size()) - 1;
  const std::vector<int64_t> momenta = timeslice_momenta(spatial + 1, momenta_per_axis);
  const hsize_t count = spatial > 0 ? momenta.size() / spatial : 1;
  std::vector<double> values(momenta.size());
  for (size_t i = 0; i < momenta.size(); ++i)
    values[i] = 6.283185307179586 * static_cast<double>(momenta[i]) / dims[i % spatial];
  const hsize_t shape[2] = {count, static_cast<hsize_t>(std::max(spatial, 0))};
  for (const auto& [name, type, data, what] :
       {std::tuple<const char*, hid_t, const void*, const char*>{
            "momenta", H5T_NATIVE_INT64, momenta.data(),
            "integer momenta n of each projection, p_a = 2 pi n_a / L_a (spatial axes 0 .. d-2)"},
        {"momentum_values", H5T_NATIVE_DOUBLE, values.data(), "the momenta p"}}) {
    H5Id space(H5_CHECK(H5Screate_simple(2, shape, nullptr)), H5Sclose);
    H5Id set(
        H5_CHECK(H5Dcreate2(group, name, type, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)),
        H5Dclose);
    if (!momenta.empty()) H5_CHECK(H5Dwrite(set.get(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data));
    write_string_attribute(set.get(), "description", what);
  }
  write_numeric_attribute(group, "every", H5T_NATIVE_INT64, &every, 1, true);
  const int64_t per_axis = momenta_per_axis;
  write_numeric_attribute(group, "momenta_per_axis", H5T_NATIVE_INT64, &per_axis, 1, true);
}

void TimesliceOutput::open(hid_t file, const std::vector<int64_t>& dims, int replicas,
                           int momenta_per_axis, int64_t rows, int ladders) {
  replicas_ = replicas;
  ladders_ = ladders;
  block_ = timeslice_block(dims, momenta_per_axis);
  series_ = RecordSeries::open(file, "correlators/timeslice",
                               timeslice_columns(dims, replicas / ladders, momenta_per_axis), rows);
}

void TimesliceOutput::append(const std::vector<int64_t>& sweeps,
                             const std::vector<double>& values) {
  const auto count = static_cast<int64_t>(sweeps.size());
  if (count == 0) return;
  if (ladders_ <= 1) return series_.append(count, {values.data(), sweeps.data()});
  const std::vector<double> means = ladder_means(values, count, replicas_, ladders_, block_);
  series_.append(count, {means.data(), sweeps.data()});
}

}  // namespace lattica

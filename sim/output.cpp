#include "sim/output.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <tuple>

#include "kernels/spectral/timeslice.hpp"
#include "sim/version.hpp"

namespace lattica {

namespace {

/// Collects HDF5's error stack into one line.
herr_t append_error(unsigned n, const H5E_error2_t* e, void* data) {
  auto* out = static_cast<std::string*>(data);
  // HDF5 descriptions can span lines (open flags, timestamps); keep the first line of each.
  std::string desc = e->desc ? e->desc : "?";
  desc = desc.substr(0, desc.find('\n'));
  if (n > 0) *out += "; ";
  *out += desc;
  return 0;
}

[[noreturn]] void throw_hdf(const char* call, const char* file, int line) {
  std::string stack;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, append_error, &stack);
  H5Eclear2(H5E_DEFAULT);
  throw HdfError(std::string("HDF5 error at ") + file + ":" + std::to_string(line) + ": " + call +
                 (stack.empty() ? "" : ": " + stack));
}

template <class T>
T check_h5(T result, const char* call, const char* file, int line) {
  if (result < 0) throw_hdf(call, file, line);
  return result;
}

#define H5_CHECK(call) check_h5((call), #call, __FILE__, __LINE__)

/// Silences HDF5's own printing once; errors reach the user through HdfError instead.
void quiet_hdf5() {
  static const bool done = [] {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    return true;
  }();
  (void)done;
}

/// File access: HDF5 locks files it writes, which fails on filesystems without lock support
/// (common on Lustre and NFS). Unless HDF5_USE_FILE_LOCKING says otherwise (HDF5 honours it:
/// FALSE, TRUE or BEST_EFFORT), lock where the filesystem can and go on without where it cannot.
H5Id file_access() {
  H5Id fapl(H5_CHECK(H5Pcreate(H5P_FILE_ACCESS)), H5Pclose);
  if (!std::getenv("HDF5_USE_FILE_LOCKING")) H5_CHECK(H5Pset_file_locking(fapl.get(), true, true));
  return fapl;
}

void write_string_attribute(hid_t object, const char* name, const std::string& value) {
  H5Id type(H5_CHECK(H5Tcopy(H5T_C_S1)), H5Tclose);
  H5_CHECK(H5Tset_size(type.get(), H5T_VARIABLE));
  H5_CHECK(H5Tset_cset(type.get(), H5T_CSET_UTF8));
  H5Id space(H5_CHECK(H5Screate(H5S_SCALAR)), H5Sclose);
  H5Id attr(H5_CHECK(H5Acreate2(object, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT)),
            H5Aclose);
  const char* text = value.c_str();
  H5_CHECK(H5Awrite(attr.get(), type.get(), &text));
}

template <class T>
void write_numeric_attribute(hid_t object, const char* name, hid_t type, const T* values, hsize_t n,
                             bool scalar) {
  H5Id space(scalar ? H5_CHECK(H5Screate(H5S_SCALAR)) : H5_CHECK(H5Screate_simple(1, &n, nullptr)),
             H5Sclose);
  H5Id attr(H5_CHECK(H5Acreate2(object, name, type, space.get(), H5P_DEFAULT, H5P_DEFAULT)),
            H5Aclose);
  H5_CHECK(H5Awrite(attr.get(), type, values));
}

/// Sets (creating on first use) a scalar int64 attribute.
void set_int64_attribute(hid_t object, const char* name, int64_t value) {
  if (H5_CHECK(H5Aexists(object, name)) == 0) {
    write_numeric_attribute(object, name, H5T_NATIVE_INT64, &value, 1, true);
    return;
  }
  H5Id attr(H5_CHECK(H5Aopen(object, name, H5P_DEFAULT)), H5Aclose);
  H5_CHECK(H5Awrite(attr.get(), H5T_NATIVE_INT64, &value));
}

/// An empty dataset of shape [0, tail...], unlimited along axis 0.
H5Id create_extendable(hid_t parent, const char* name, hid_t type, const std::vector<hsize_t>& tail,
                       const std::vector<hsize_t>& chunk) {
  std::vector<hsize_t> dims{0}, max_dims{H5S_UNLIMITED};
  for (hsize_t t : tail) {
    dims.push_back(t);
    max_dims.push_back(t);
  }
  H5Id space(
      H5_CHECK(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), max_dims.data())),
      H5Sclose);
  H5Id plist(H5_CHECK(H5Pcreate(H5P_DATASET_CREATE)), H5Pclose);
  H5_CHECK(H5Pset_chunk(plist.get(), static_cast<int>(chunk.size()), chunk.data()));
  return H5Id(
      H5_CHECK(H5Dcreate2(parent, name, type, space.get(), H5P_DEFAULT, plist.get(), H5P_DEFAULT)),
      H5Dclose);
}

/// Writes `count` rows of shape tail at row `first` of an extendable dataset, growing it.
void append_rows(hid_t set, hid_t type, int64_t first, int64_t count,
                 const std::vector<hsize_t>& tail, const void* data) {
  std::vector<hsize_t> size{static_cast<hsize_t>(first + count)},
      start{static_cast<hsize_t>(first)}, block{static_cast<hsize_t>(count)};
  for (hsize_t t : tail) {
    size.push_back(t);
    start.push_back(0);
    block.push_back(t);
  }
  H5_CHECK(H5Dset_extent(set, size.data()));
  H5Id file_space(H5_CHECK(H5Dget_space(set)), H5Sclose);
  H5_CHECK(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr,
                               block.data(), nullptr));
  H5Id memory_space(
      H5_CHECK(H5Screate_simple(static_cast<int>(block.size()), block.data(), nullptr)), H5Sclose);
  H5_CHECK(H5Dwrite(set, type, memory_space.get(), file_space.get(), H5P_DEFAULT, data));
}

/// Snapshot chunks: one frame, cut along the leading axes to at most 64 MiB (HDF5 caps a
/// chunk at 4 GiB, and smaller chunks keep partial reads cheap).
std::vector<hsize_t> snapshot_chunk(const std::vector<hsize_t>& tail, size_t element_bytes) {
  std::vector<hsize_t> chunk{1};
  chunk.insert(chunk.end(), tail.begin(), tail.end());
  auto bytes = [&] {
    hsize_t b = element_bytes;
    for (hsize_t c : chunk) b *= c;
    return b;
  };
  for (size_t axis = 1; axis < chunk.size() && bytes() > (hsize_t(64) << 20); ++axis) {
    while (chunk[axis] > 1 && bytes() > (hsize_t(64) << 20)) chunk[axis] = (chunk[axis] + 1) / 2;
  }
  return chunk;
}

}  // namespace

H5Id& H5Id::operator=(H5Id&& o) noexcept {
  if (this != &o) {
    reset();
    id_ = o.id_;
    close_ = o.close_;
    o.id_ = H5I_INVALID_HID;
  }
  return *this;
}

void H5Id::reset() {
  if (id_ >= 0 && close_) close_(id_);  // a failed close cannot be reported from a destructor
  id_ = H5I_INVALID_HID;
}

std::string utc_now_iso8601() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buffer;
}

OutputFile::OutputFile(const std::string& path, bool overwrite, const RunMetadata& m,
                       const std::vector<std::string>& observables,
                       const std::vector<std::string>& descriptions)
    : path_(path), dims_(m.dims), replicas_(m.replicas) {
  quiet_hdf5();
  file_ = H5Id(H5_CHECK(H5Fcreate(path.c_str(), overwrite ? H5F_ACC_TRUNC : H5F_ACC_EXCL,
                                  H5P_DEFAULT, file_access().get())),
               H5Fclose);
  const hid_t root = file_.get();
  write_string_attribute(root, "schema", "lattica/1");
  write_string_attribute(root, "program_version", kLatticaVersion);
  write_string_attribute(root, "git_commit", kLatticaGitCommit);
  write_string_attribute(root, "created_utc", utc_now_iso8601());
  // 1 once the run did all its sweeps; set in place, so the root's header never grows at the
  // end of the file (where a copy cut short would lose it).
  set_int64_attribute(root, "finished", 0);
  write_string_attribute(root, "input_path", m.input_path);
  write_string_attribute(root, "input_toml", m.input_toml);
  write_string_attribute(root, "resolved_config", m.resolved_toml);
  write_string_attribute(root, "model", m.model);
  write_string_attribute(root, "algorithm", m.algorithm);
  write_string_attribute(root, "backend", m.backend);
  write_string_attribute(root, "device", m.device);
  write_numeric_attribute(root, "seed", H5T_NATIVE_UINT64, &m.seed, 1, true);
  if (m.model == "phi4") {
    write_numeric_attribute(root, "kappa", H5T_NATIVE_DOUBLE, &m.kappa, 1, true);
    write_numeric_attribute(root, "lambda", H5T_NATIVE_DOUBLE, &m.lambda, 1, true);
  } else {
    write_numeric_attribute(root, "beta", H5T_NATIVE_DOUBLE, &m.beta, 1, true);
  }
  write_numeric_attribute(root, "h", H5T_NATIVE_DOUBLE, &m.field, 1, true);
  if (m.n > 0) {
    const int64_t n = m.n;
    write_numeric_attribute(root, "n", H5T_NATIVE_INT64, &n, 1, true);
  }
  if (!m.precision.empty()) {
    write_string_attribute(root, "precision", m.precision);
    const int64_t hits = m.hits;
    write_numeric_attribute(root, "hits", H5T_NATIVE_INT64, &hits, 1, true);
  }
  write_numeric_attribute(root, "lattice_dims", H5T_NATIVE_INT64, m.dims.data(), m.dims.size(),
                          false);
  if (m.q > 0) {
    const int64_t q = m.q;
    write_numeric_attribute(root, "q", H5T_NATIVE_INT64, &q, 1, true);
  }
  const int64_t replicas = m.replicas;
  write_numeric_attribute(root, "replicas", H5T_NATIVE_INT64, &replicas, 1, true);
  if (m.point_index >= 0) {
    write_numeric_attribute(root, "point_index", H5T_NATIVE_INT64, &m.point_index, 1, true);
    write_string_attribute(root, "swept_parameters", m.swept);
  }

  observables_group_ = H5Id(
      H5_CHECK(H5Gcreate2(root, "observables", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)), H5Gclose);
  for (size_t o = 0; o < observables.size(); ++o) {
    observable_sets_.push_back(create_extendable(observables_group_.get(), observables[o].c_str(),
                                                 H5T_NATIVE_DOUBLE, replica_axis(),
                                                 chunk_rows(4096)));
    write_string_attribute(observable_sets_.back().get(), "description", descriptions[o]);
  }
  sweep_set_ = create_extendable(observables_group_.get(), "sweep", H5T_NATIVE_INT64, {}, {4096});
  write_string_attribute(sweep_set_.get(), "description",
                         "sweeps completed when the measurement was taken");
  set_int64_attribute(observables_group_.get(), "committed_length", 0);

  snapshots_group_ = H5Id(
      H5_CHECK(H5Gcreate2(root, "snapshots", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)), H5Gclose);
  set_layout(m);
  const std::vector<hsize_t> tail = snapshot_tail();
  snapshot_set_ = create_extendable(snapshots_group_.get(), "configuration", snapshot_type_, tail,
                                    snapshot_chunk(tail, H5Tget_size(snapshot_type_)));
  write_string_attribute(
      snapshot_set_.get(), "description",
      std::string(m.snapshot.description) +
          (replicas_ > 1 ? ", frames x replicas x lattice" : ", frames x lattice") +
          (snapshot_components_ > 1 ? " x components" : "") +
          (snapshot_bit_packed_ ? " (the last axis in bytes of 8 sites)" : "") +
          " in lexicographic order (last lattice axis fastest)");
  write_string_attribute(snapshot_set_.get(), "packing", snapshot_bit_packed_ ? "bits" : "none");
  snapshot_sweep_set_ =
      create_extendable(snapshots_group_.get(), "sweep", H5T_NATIVE_INT64, {}, {256});
  write_string_attribute(snapshot_sweep_set_.get(), "description",
                         "sweeps completed when each frame was taken");
  set_int64_attribute(snapshots_group_.get(), "committed_length", 0);

  H5Id correlators;
  if (m.structure_factor_every > 0 || m.timeslice_every > 0) {
    correlators = H5Id(
        H5_CHECK(H5Gcreate2(root, "correlators", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)),
        H5Gclose);
  }
  if (m.timeslice_every > 0) {
    timeslice_group_ = H5Id(H5_CHECK(H5Gcreate2(correlators.get(), "timeslice", H5P_DEFAULT,
                                                H5P_DEFAULT, H5P_DEFAULT)),
                            H5Gclose);
    const int spatial = static_cast<int>(m.dims.size()) - 1;
    const std::vector<int64_t> momenta = timeslice_momenta(spatial + 1, m.timeslice_momenta);
    const hsize_t count = spatial > 0 ? momenta.size() / spatial : 1;
    std::vector<double> values(momenta.size());
    for (size_t i = 0; i < momenta.size(); ++i)
      values[i] = 6.283185307179586 * static_cast<double>(momenta[i]) / m.dims[i % spatial];
    const hsize_t shape[2] = {count, static_cast<hsize_t>(std::max(spatial, 0))};
    for (const auto& [name, type, data, what] :
         {std::tuple<const char*, hid_t, const void*, const char*>{
              "momenta", H5T_NATIVE_INT64, momenta.data(),
              "integer momenta n of each projection, p_a = 2 pi n_a / L_a (spatial axes 0 .. d-2)"},
          {"momentum_values", H5T_NATIVE_DOUBLE, values.data(), "the momenta p"}}) {
      H5Id space(H5_CHECK(H5Screate_simple(2, shape, nullptr)), H5Sclose);
      H5Id set(H5_CHECK(H5Dcreate2(timeslice_group_.get(), name, type, space.get(), H5P_DEFAULT,
                                   H5P_DEFAULT, H5P_DEFAULT)),
               H5Dclose);
      if (!momenta.empty()) H5_CHECK(H5Dwrite(set.get(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data));
      write_string_attribute(set.get(), "description", what);
    }
    std::vector<hsize_t> chunk{16};
    chunk.insert(chunk.end(), timeslice_tail_.begin(), timeslice_tail_.end());
    timeslice_set_ = create_extendable(timeslice_group_.get(), "C", H5T_NATIVE_DOUBLE,
                                       timeslice_tail_, chunk);
    write_string_attribute(
        timeslice_set_.get(), "description",
        "C(dt, p) = (1/(T V_s)) sum_t sum_c Re[O_c(t + dt, p) conj(O_c(t, p))], O_c(t, p) = "
        "sum_x phi_c(x, t) exp(-i p.x); the last lattice axis is time; per measurement "
        "[, replica], dt = 0 .. T-1 (periodic), momentum index");
    timeslice_sweep_set_ =
        create_extendable(timeslice_group_.get(), "sweep", H5T_NATIVE_INT64, {}, {1024});
    write_numeric_attribute(timeslice_group_.get(), "every", H5T_NATIVE_INT64, &m.timeslice_every,
                            1, true);
    const int64_t per_axis = m.timeslice_momenta;
    write_numeric_attribute(timeslice_group_.get(), "momenta_per_axis", H5T_NATIVE_INT64,
                            &per_axis, 1, true);
    set_int64_attribute(timeslice_group_.get(), "committed_length", 0);
  }
  if (m.structure_factor_every > 0) {
    structure_factor_group_ = H5Id(H5_CHECK(H5Gcreate2(correlators.get(), "structure_factor",
                                                       H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)),
                                   H5Gclose);
    write_numeric_attribute(structure_factor_group_.get(), "every", H5T_NATIVE_INT64,
                            &m.structure_factor_every, 1, true);
    series_group_ = H5Id(H5_CHECK(H5Gcreate2(structure_factor_group_.get(), "series", H5P_DEFAULT,
                                             H5P_DEFAULT, H5P_DEFAULT)),
                         H5Gclose);
    const char* names[] = {"s0", "s_min", "xi2"};
    const char* descriptions[] = {
        "S(0) = |sum_x phi(x)|^2 / V of this measurement (summed over components)",
        "S(k_min): the mean of S over the unit momenta 2 pi / L along the longest axes",
        "second-moment correlation length of this measurement, sqrt(S(0)/S(k_min) - 1) / "
        "(2 sin(pi / L)); NaN where S(0) <= S(k_min). Prefer xi2 from the averages of s0 and "
        "s_min (a per-measurement ratio is biased)"};
    for (int i = 0; i < 3; ++i) {
      series_sets_.push_back(create_extendable(series_group_.get(), names[i], H5T_NATIVE_DOUBLE,
                                               replica_axis(), chunk_rows(1024)));
      write_string_attribute(series_sets_.back().get(), "description", descriptions[i]);
    }
    series_sweep_set_ =
        create_extendable(series_group_.get(), "sweep", H5T_NATIVE_INT64, {}, {1024});
    set_int64_attribute(series_group_.get(), "committed_length", 0);
  }
  flush();
}

void OutputFile::append_structure_factor_series(const std::vector<int64_t>& sweeps,
                                                const std::vector<double>& values) {
  const auto count = static_cast<int64_t>(sweeps.size());
  if (count == 0) return;
  const size_t rows = static_cast<size_t>(count) * replicas_;
  std::vector<double> s0(rows), s_min(rows), xi2(rows);
  for (size_t i = 0; i < rows; ++i) {
    s0[i] = values[2 * i];
    s_min[i] = values[2 * i + 1];
    xi2[i] = second_moment_length(s0[i], s_min[i], longest_axis_);
  }
  const std::vector<double>* columns[] = {&s0, &s_min, &xi2};
  for (int i = 0; i < 3; ++i) {
    append_rows(series_sets_[i].get(), H5T_NATIVE_DOUBLE, series_length_, count, replica_axis(),
                columns[i]->data());
  }
  append_rows(series_sweep_set_.get(), H5T_NATIVE_INT64, series_length_, count, {},
              sweeps.data());
  series_length_ += count;
}

void OutputFile::append_timeslices(const std::vector<int64_t>& sweeps,
                                   const std::vector<double>& values) {
  const auto count = static_cast<int64_t>(sweeps.size());
  if (count == 0) return;
  append_rows(timeslice_set_.get(), H5T_NATIVE_DOUBLE, timeslice_length_, count, timeslice_tail_,
              values.data());
  append_rows(timeslice_sweep_set_.get(), H5T_NATIVE_INT64, timeslice_length_, count, {},
              sweeps.data());
  timeslice_length_ += count;
}

void OutputFile::write_structure_factor(const StructureFactorSums& sums) {
  if (sums.samples == 0) return;
  const StructureFactorTables t = structure_factor_tables(sums);
  const hid_t group = structure_factor_group_.get();
  auto write = [&](const char* name, const std::vector<hsize_t>& shape, hid_t type,
                   const void* data, const std::string& description) {
    if (H5_CHECK(H5Lexists(group, name, H5P_DEFAULT)) > 0)
      H5_CHECK(H5Ldelete(group, name, H5P_DEFAULT));
    H5Id space(H5_CHECK(H5Screate_simple(static_cast<int>(shape.size()), shape.data(), nullptr)),
               H5Sclose);
    H5Id set(H5_CHECK(H5Dcreate2(group, name, type, space.get(), H5P_DEFAULT, H5P_DEFAULT,
                                 H5P_DEFAULT)),
             H5Dclose);
    H5_CHECK(H5Dwrite(set.get(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data));
    write_string_attribute(set.get(), "description", description);
  };
  const std::vector<hsize_t> half(t.spectrum_shape.begin(), t.spectrum_shape.end());
  const std::vector<hsize_t> full(dims_.begin(), dims_.end());
  write("S", half, H5T_NATIVE_DOUBLE, t.s.data(),
        "<S(k)>, S(k) = sum_c |sum_x phi_c(x) exp(-i k.x)|^2 / V, on the half spectrum of a "
        "real FFT (last axis L/2 + 1 modes; S(-k) = S(k)); momenta in momentum_<axis>");
  write("S_error", half, H5T_NATIVE_DOUBLE, t.s_error.data(),
        "standard error of S(k), treating the samples as independent (true when measurements "
        "are further apart than the autocorrelation time)");
  write("S_connected", half, H5T_NATIVE_DOUBLE, t.s_connected.data(),
        "S(k) - V |<m>|^2 delta_{k,0}: the connected structure factor (differs from S only at "
        "k = 0, and only where the phase is ordered)");
  write("G", full, H5T_NATIVE_DOUBLE, t.g.data(),
        "G(r) = (1/V) sum_x <phi(x) . phi(x + r)> by inverse FFT of <S(k)> (Wiener-Khinchin); "
        "distances r_a = 0 .. L_a - 1 (periodic) along each axis");
  write("G_connected", full, H5T_NATIVE_DOUBLE, t.g_connected.data(), "G(r) - |<m>|^2");
  for (size_t a = 0; a < t.momenta.size(); ++a) {
    write(("momentum_" + std::to_string(a)).c_str(), {t.momenta[a].size()}, H5T_NATIVE_DOUBLE,
          t.momenta[a].data(), "k_a = 2 pi n / L_a of each index along axis " + std::to_string(a));
  }
  write("radial_k", {t.radial_k.size()}, H5T_NATIVE_DOUBLE, t.radial_k.data(),
        "mean |k| of each shell of width 2 pi / L_max");
  write("radial_S", {t.radial_s.size()}, H5T_NATIVE_DOUBLE, t.radial_s.data(),
        "<S> averaged over the modes of each shell (the full lattice's modes)");
  write("radial_modes", {t.radial_modes.size()}, H5T_NATIVE_INT64, t.radial_modes.data(),
        "number of lattice momenta in each shell");
  write("mean_field", {t.mean_field.size()}, H5T_NATIVE_DOUBLE, t.mean_field.data(),
        "<m_c> = <(1/V) sum_x phi_c(x)> per order-parameter component");
  set_int64_attribute(group, "samples", sums.samples);
  set_int64_attribute(group, "components", sums.components);
  if (H5_CHECK(H5Aexists(group, "xi2")) > 0) H5_CHECK(H5Adelete(group, "xi2"));
  write_numeric_attribute(group, "xi2", H5T_NATIVE_DOUBLE, &t.xi2, 1, true);
}

void OutputFile::append_measurements(const std::vector<int64_t>& sweeps,
                                     const std::vector<double>& values) {
  const int64_t count = static_cast<int64_t>(sweeps.size());
  if (count == 0) return;
  const size_t n_obs = observable_sets_.size();
  const size_t per_row = static_cast<size_t>(replicas_);
  std::vector<double> column(static_cast<size_t>(count) * per_row);
  for (size_t o = 0; o < n_obs; ++o) {
    for (size_t i = 0; i < column.size(); ++i) column[i] = values[i * n_obs + o];
    append_rows(observable_sets_[o].get(), H5T_NATIVE_DOUBLE, measurements_, count, replica_axis(),
                column.data());
  }
  append_rows(sweep_set_.get(), H5T_NATIVE_INT64, measurements_, count, {}, sweeps.data());
  measurements_ += count;
}

void OutputFile::append_snapshot(int64_t sweep, const void* configuration) {
  append_rows(snapshot_set_.get(), snapshot_type_, snapshots_, 1, snapshot_tail(), configuration);
  append_rows(snapshot_sweep_set_.get(), H5T_NATIVE_INT64, snapshots_, 1, {}, &sweep);
  ++snapshots_;
}

void OutputFile::set_layout(const RunMetadata& m) {
  switch (m.snapshot.type) {
    case ElementType::int8:
      snapshot_type_ = H5T_NATIVE_INT8;
      break;
    case ElementType::uint8:
      snapshot_type_ = H5T_NATIVE_UINT8;
      break;
    case ElementType::float32:
      snapshot_type_ = H5T_NATIVE_FLOAT;
      break;
    case ElementType::float64:
      snapshot_type_ = H5T_NATIVE_DOUBLE;
      break;
  }
  snapshot_components_ = m.snapshot.components;
  snapshot_bit_packed_ = m.snapshot.bit_packed;
  longest_axis_ = *std::max_element(m.dims.begin(), m.dims.end());
  if (m.timeslice_every > 0) {
    const int spatial = static_cast<int>(m.dims.size()) - 1;
    const size_t momenta = timeslice_momenta(spatial + 1, m.timeslice_momenta).size();
    timeslice_tail_ = replica_axis();
    timeslice_tail_.push_back(static_cast<hsize_t>(m.dims.back()));
    timeslice_tail_.push_back(spatial > 0 ? momenta / spatial : 1);
  }
}

namespace {

/// Opens an existing group or dataset of a file being resumed.
H5Id open_group(hid_t parent, const char* name) {
  return H5Id(H5_CHECK(H5Gopen2(parent, name, H5P_DEFAULT)), H5Gclose);
}
H5Id open_set(hid_t parent, const char* name) {
  return H5Id(H5_CHECK(H5Dopen2(parent, name, H5P_DEFAULT)), H5Dclose);
}

/// Cuts an extendable dataset back to `rows` along axis 0.
void truncate_rows(hid_t set, int64_t rows) {
  H5Id space(H5_CHECK(H5Dget_space(set)), H5Sclose);
  std::vector<hsize_t> dims(static_cast<size_t>(H5_CHECK(H5Sget_simple_extent_ndims(space.get()))));
  H5_CHECK(H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr));
  if (dims[0] < static_cast<hsize_t>(rows)) {
    throw HdfError("the output file has " + std::to_string(dims[0]) +
                   " rows where the checkpoint recorded " + std::to_string(rows) +
                   "; it does not belong to this checkpoint");
  }
  dims[0] = static_cast<hsize_t>(rows);
  H5_CHECK(H5Dset_extent(set, dims.data()));
}

/// The parts of an HDF5 superblock that say how long the file is.
struct Superblock {
  int version = 0;
  int64_t base = 0;  ///< base address
  int64_t end = 0;   ///< end-of-file address, relative to the base
  int end_at = 0;    ///< where the end-of-file address is in the file
};

/// Reads the superblock at the start of a file; false when it has none this reader knows.
bool read_superblock(const std::string& path, Superblock& s) {
  std::ifstream in(path, std::ios::binary);
  unsigned char b[64] = {};
  in.read(reinterpret_cast<char*>(b), sizeof b);
  const unsigned char signature[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  if (in.gcount() < 48 || std::memcmp(b, signature, 8) != 0) return false;
  s.version = b[8];
  // Superblock versions 0/1 keep the sizes at bytes 13/14 and the addresses after 24 (28 for
  // version 1) bytes; versions 2/3 keep them at 9/10 and after 12 bytes.
  const int offsets = s.version <= 1 ? b[13] : b[9];
  const int first_address = s.version == 0 ? 24 : s.version == 1 ? 28 : 12;
  if (offsets != 8 || s.version > 3) return false;
  auto address = [&](int at) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | b[at + i];  // little-endian
    return static_cast<int64_t>(v);
  };
  s.base = address(first_address);
  s.end_at = first_address + 16;  // after the base and one more address
  s.end = address(s.end_at);
  return true;
}

/// The file length an HDF5 superblock records (its end-of-file address plus the base
/// address), or -1 when the file does not start with a superblock this reader knows.
int64_t recorded_length(const std::string& path) {
  Superblock s;
  return read_superblock(path, s) ? s.base + s.end : -1;
}

/// Makes a file's length and the end its superblock records agree before HDF5 writes to it;
/// says what it did (empty: nothing). A file left by a crash or a full disk in the middle of a
/// flush can be shorter: it is padded with zeros, without which HDF5 refuses to open it. Or
/// longer: bytes written after the superblock was last written, which metadata written in the
/// same flush may point to; the recorded end is raised to the file's length, so that HDF5
/// allocates new space after them instead of over them (which corrupts the file: "addr
/// overflow", "message not aligned").
std::string match_recorded_length(const std::string& path) {
  Superblock s;
  if (!read_superblock(path, s)) return "";
  std::error_code ec;
  const auto actual = static_cast<int64_t>(std::filesystem::file_size(path, ec));
  if (ec) throw HdfError("cannot read the size of " + path + ": " + ec.message());
  const int64_t recorded = s.base + s.end;
  if (recorded < actual) {
    // Versions 2 and 3 protect the superblock with a checksum; sim writes version 0.
    if (s.version > 1) {
      throw HdfError(path + " is longer than its (version " + std::to_string(s.version) +
                     ") superblock records; it cannot be continued safely");
    }
    unsigned char bytes[8];
    for (int i = 0; i < 8; ++i) bytes[i] = static_cast<unsigned char>((actual - s.base) >> (8 * i));
    std::fstream io(path, std::ios::binary | std::ios::in | std::ios::out);
    io.seekp(s.end_at);
    io.write(reinterpret_cast<const char*>(bytes), sizeof bytes);
    io.flush();
    if (!io) throw HdfError("cannot write the superblock of " + path);
    return "raised the end of file its superblock records over " +
           std::to_string(actual - recorded) + " bytes written after it";
  }
  if (recorded > actual) {
    std::filesystem::resize_file(path, static_cast<uintmax_t>(recorded), ec);
    if (ec) {
      throw HdfError("cannot pad " + path + " to " + std::to_string(recorded) +
                     " bytes: " + ec.message());
    }
    return "padded the file to the length its superblock records";
  }
  return "";
}

/// Copies a file, replacing `to`; HdfError (the copy removed) when it cannot, e.g. on a full
/// disk.
void copy_whole_file(const std::string& from, const std::string& to) {
  std::error_code ec;
  std::filesystem::copy_file(from, to, std::filesystem::copy_options::overwrite_existing, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(to, ignored);
    throw HdfError("cannot copy " + from + " to " + to + ": " + ec.message());
  }
}

/// Flushes a file's data to the disk (HDF5's flush leaves it to the operating system).
void sync_to_disk(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || ::fsync(fd) != 0) {
    const std::string why = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    throw HdfError("cannot flush " + path + " to disk: " + why);
  }
  ::close(fd);
}

/// Replaces `path` by the complete file `working` atomically: on disk first, then renamed (and
/// the rename on disk, where the directory can be synced).
void replace_by(const std::string& working, const std::string& path) {
  sync_to_disk(working);
  if (std::rename(working.c_str(), path.c_str()) != 0)
    throw HdfError("cannot rename " + working + " to " + path + ": " + std::strerror(errno));
  const std::filesystem::path parent = std::filesystem::absolute(path).parent_path();
  const int dir = ::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

/// How many of the first `rows` rows of an extendable (chunked) dataset lie in the first
/// `present` bytes of the file: a row counts only when every chunk holding it was allocated
/// and ends within them. Beyond them a cut-short file holds padding, not data.
int64_t rows_in_file(hid_t set, int64_t rows, int64_t present) {
  H5Id plist(H5_CHECK(H5Dget_create_plist(set)), H5Pclose);
  H5Id space(H5_CHECK(H5Dget_space(set)), H5Sclose);
  const int rank = H5_CHECK(H5Sget_simple_extent_ndims(space.get()));
  std::vector<hsize_t> dims(static_cast<size_t>(rank)), chunk(static_cast<size_t>(rank));
  H5_CHECK(H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr));
  H5_CHECK(H5Pget_chunk(plist.get(), rank, chunk.data()));
  std::vector<hsize_t> offset(static_cast<size_t>(rank), 0);
  for (hsize_t first = 0; first < static_cast<hsize_t>(rows); first += chunk[0]) {
    // Every chunk of this block of rows: an odometer over the chunk grid of the other axes.
    std::fill(offset.begin(), offset.end(), 0);
    offset[0] = first;
    for (bool more = true; more;) {
      unsigned filters = 0;
      haddr_t address = HADDR_UNDEF;
      hsize_t bytes = 0;
      H5_CHECK(H5Dget_chunk_info_by_coord(set, offset.data(), &filters, &address, &bytes));
      if (address == HADDR_UNDEF || static_cast<int64_t>(address + bytes) > present)
        return static_cast<int64_t>(first);
      more = false;
      for (int a = rank - 1; a >= 1 && !more; --a) {
        offset[a] += chunk[a];
        more = offset[a] < dims[a];
        if (!more) offset[a] = 0;
      }
    }
  }
  return rows;
}

/// The datasets of a file with contiguous storage whose bytes go beyond the first `present`
/// bytes of the file (results written at the end of a run, e.g. the histograms).
std::vector<std::string> contiguous_sets_beyond(hid_t file, int64_t present) {
  struct Search {
    int64_t present;
    std::vector<std::string> names;
  } search{present, {}};
  auto visit = [](hid_t object, const char* name, const H5O_info_t* info, void* data) -> herr_t {
    if (info->type != H5O_TYPE_DATASET) return 0;
    auto* s = static_cast<Search*>(data);
    const hid_t set = H5Dopen2(object, name, H5P_DEFAULT);
    if (set < 0) return -1;
    const haddr_t offset = H5Dget_offset(set);  // HADDR_UNDEF unless contiguous and allocated
    const hsize_t bytes = H5Dget_storage_size(set);
    if (H5Dclose(set) < 0) return -1;
    if (offset != HADDR_UNDEF && static_cast<int64_t>(offset + bytes) > s->present)
      s->names.push_back(std::string("/") + name);
    return 0;
  };
  H5_CHECK(H5Ovisit2(file, H5_INDEX_NAME, H5_ITER_INC, visit, &search, H5O_INFO_BASIC));
  return search.names;
}

/// Replaces a string attribute.
void replace_string_attribute(hid_t object, const char* name, const std::string& value) {
  if (H5_CHECK(H5Aexists(object, name)) > 0) H5_CHECK(H5Adelete(object, name));
  write_string_attribute(object, name, value);
}

}  // namespace

OutputFile::OutputFile(const std::string& path, const RunMetadata& m,
                       const std::vector<std::string>& observables, const OutputLengths& lengths)
    : path_(path), dims_(m.dims), replicas_(m.replicas) {
  quiet_hdf5();
  set_layout(m);
  working_path_ = working_copy_path(path);
  copy_whole_file(path, working_path_);
  try {
    reopen(m, observables, lengths);
  } catch (...) {
    std::remove(working_path_.c_str());  // the output stays as it was
    throw;
  }
}

void OutputFile::reopen(const RunMetadata& m, const std::vector<std::string>& observables,
                        const OutputLengths& lengths) {
  match_recorded_length(working_path_);
  file_ =
      H5Id(H5_CHECK(H5Fopen(working_path_.c_str(), H5F_ACC_RDWR, file_access().get())), H5Fclose);
  const hid_t root = file_.get();
  set_int64_attribute(root, "finished", 0);  // until the resumed run is done
  replace_string_attribute(root, "input_toml", m.input_toml);
  replace_string_attribute(root, "resolved_config", m.resolved_toml);
  // Where the chain continued, and on what: one line per resume.
  std::string history;
  if (H5_CHECK(H5Aexists(root, "resumed")) > 0) {
    H5Id attr(H5_CHECK(H5Aopen(root, "resumed", H5P_DEFAULT)), H5Aclose);
    H5Id type(H5_CHECK(H5Aget_type(attr.get())), H5Tclose);
    char* text = nullptr;
    H5_CHECK(H5Aread(attr.get(), type.get(), &text));
    history = text ? text : "";
    H5free_memory(text);
  }
  history += utc_now_iso8601() + ": resumed on " + m.backend + " (" + m.device + ")\n";
  replace_string_attribute(root, "resumed", history);

  observables_group_ = open_group(root, "observables");
  for (const std::string& name : observables)
    observable_sets_.push_back(open_set(observables_group_.get(), name.c_str()));
  sweep_set_ = open_set(observables_group_.get(), "sweep");
  snapshots_group_ = open_group(root, "snapshots");
  snapshot_set_ = open_set(snapshots_group_.get(), "configuration");
  snapshot_sweep_set_ = open_set(snapshots_group_.get(), "sweep");
  measurements_ = lengths.measurements;
  snapshots_ = lengths.snapshots;
  for (const H5Id& set : observable_sets_) truncate_rows(set.get(), measurements_);
  truncate_rows(sweep_set_.get(), measurements_);
  truncate_rows(snapshot_set_.get(), snapshots_);
  truncate_rows(snapshot_sweep_set_.get(), snapshots_);
  if (m.structure_factor_every > 0) {
    structure_factor_group_ = open_group(root, "correlators/structure_factor");
    series_group_ = open_group(structure_factor_group_.get(), "series");
    for (const char* name : {"s0", "s_min", "xi2"})
      series_sets_.push_back(open_set(series_group_.get(), name));
    series_sweep_set_ = open_set(series_group_.get(), "sweep");
    series_length_ = lengths.structure_factor_series;
    for (const H5Id& set : series_sets_) truncate_rows(set.get(), series_length_);
    truncate_rows(series_sweep_set_.get(), series_length_);
  }
  if (m.timeslice_every > 0) {
    timeslice_group_ = open_group(root, "correlators/timeslice");
    timeslice_set_ = open_set(timeslice_group_.get(), "C");
    timeslice_sweep_set_ = open_set(timeslice_group_.get(), "sweep");
    timeslice_length_ = lengths.timeslices;
    truncate_rows(timeslice_set_.get(), timeslice_length_);
    truncate_rows(timeslice_sweep_set_.get(), timeslice_length_);
  }
  flush();
}

std::vector<std::string> recover_output(const std::string& path) {
  quiet_hdf5();
  if (recorded_length(path) < 0) {
    throw InputError(path + ": not an HDF5 file written by sim (no HDF5 superblock at its " +
                     "start); nothing to recover");
  }
  std::error_code ec;
  const auto present = static_cast<int64_t>(std::filesystem::file_size(path, ec));
  if (ec) throw HdfError("cannot read the size of " + path + ": " + ec.message());
  // The repair goes into a copy, so a failure (a full disk, damage HDF5 cannot read) leaves
  // the file as it was.
  const std::string working = working_copy_path(path);
  copy_whole_file(path, working);
  std::vector<std::string> done;
  try {
    const std::string matched = match_recorded_length(working);
    if (!matched.empty()) done.push_back(matched);
    H5Id file(H5_CHECK(H5Fopen(working.c_str(), H5F_ACC_RDWR, file_access().get())), H5Fclose);
    for (const char* group_name :
         {"observables", "snapshots", "correlators/structure_factor/series",
          "correlators/timeslice"}) {
      // H5Lexists needs every parent of a path to exist, so test the path's prefixes in turn.
      const std::string path_name = group_name;
      bool exists = true;
      for (size_t end = 0; exists && end != std::string::npos;) {
        end = path_name.find('/', end + 1);
        exists = H5_CHECK(H5Lexists(file.get(), path_name.substr(0, end).c_str(), H5P_DEFAULT)) > 0;
      }
      if (!exists) continue;
      H5Id group = open_group(file.get(), group_name);
      if (H5_CHECK(H5Aexists(group.get(), "committed_length")) <= 0) continue;
      int64_t committed = 0;
      {
        H5Id attr(H5_CHECK(H5Aopen(group.get(), "committed_length", H5P_DEFAULT)), H5Aclose);
        H5_CHECK(H5Aread(attr.get(), H5T_NATIVE_INT64, &committed));
      }
      // The group's extendable datasets: the series that committed_length vouches for.
      std::vector<std::pair<std::string, H5Id>> series;
      H5G_info_t info{};
      H5_CHECK(H5Gget_info(group.get(), &info));
      for (hsize_t i = 0; i < info.nlinks; ++i) {
        char name[256];
        H5_CHECK(H5Lget_name_by_idx(group.get(), ".", H5_INDEX_NAME, H5_ITER_INC, i, name,
                                    sizeof name, H5P_DEFAULT));
        H5O_info_t object{};
        H5_CHECK(H5Oget_info_by_name(group.get(), name, &object, H5P_DEFAULT));
        if (object.type != H5O_TYPE_DATASET) continue;
        H5Id set = open_set(group.get(), name);
        H5Id space(H5_CHECK(H5Dget_space(set.get())), H5Sclose);
        const int rank = H5_CHECK(H5Sget_simple_extent_ndims(space.get()));
        std::vector<hsize_t> max_dims(static_cast<size_t>(rank));
        H5_CHECK(H5Sget_simple_extent_dims(space.get(), nullptr, max_dims.data()));
        if (rank > 0 && max_dims[0] == H5S_UNLIMITED) series.emplace_back(name, std::move(set));
      }
      // Committed rows that were never in this file (cut short by a copy) are padding now.
      int64_t kept = committed;
      for (const auto& [name, set] : series)
        kept = std::min(kept, rows_in_file(set.get(), kept, present));
      if (kept < committed) {
        done.push_back(std::string(group_name) + ": only " + std::to_string(kept) + " of " +
                       std::to_string(committed) +
                       " committed rows are in the file; committed_length lowered to " +
                       std::to_string(kept));
        set_int64_attribute(group.get(), "committed_length", kept);
      }
      for (const auto& [name, set] : series) {
        H5Id space(H5_CHECK(H5Dget_space(set.get())), H5Sclose);
        std::vector<hsize_t> dims(
            static_cast<size_t>(H5_CHECK(H5Sget_simple_extent_ndims(space.get()))));
        H5_CHECK(H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr));
        if (dims[0] <= static_cast<hsize_t>(kept)) continue;
        done.push_back(std::string(group_name) + "/" + name + ": " + std::to_string(dims[0]) +
                       " rows cut to " + std::to_string(kept));
        truncate_rows(set.get(), kept);
      }
    }
    // Results written in one piece (histograms, the averaged structure factor) that the file
    // does not hold in full are removed rather than read as zeros.
    for (const std::string& name : contiguous_sets_beyond(file.get(), present)) {
      H5_CHECK(H5Ldelete(file.get(), name.c_str(), H5P_DEFAULT));
      done.push_back(name + ": removed, its data is not in the file");
    }
    H5_CHECK(H5Fflush(file.get(), H5F_SCOPE_GLOBAL));
    H5_CHECK(H5Fclose(file.release()));
    if (done.empty()) {
      std::filesystem::remove(working);
    } else {
      replace_by(working, path);
    }
  } catch (...) {
    std::remove(working.c_str());
    throw;
  }
  return done;
}

OutputFile::~OutputFile() {
  if (!working_path_.empty()) std::remove(working_path_.c_str());
}

void OutputFile::publish() {
  if (working_path_.empty()) return;
  replace_by(working_path_, path_);
  working_path_.clear();
}

void OutputFile::mark_finished() { set_int64_attribute(file_.get(), "finished", 1); }

std::string working_copy_path(const std::string& output_path) { return output_path + ".tmp"; }

bool output_finished(const std::string& path) {
  quiet_hdf5();
  if (recorded_length(path) < 0) return false;
  // Unchecked on purpose: a file HDF5 cannot open (cut short, damaged) is not finished.
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, file_access().get());
  if (file < 0) {
    H5Eclear2(H5E_DEFAULT);
    return false;
  }
  int64_t finished = 0;
  const hid_t attr = H5Aopen(file, "finished", H5P_DEFAULT);
  if (attr >= 0) {
    if (H5Aread(attr, H5T_NATIVE_INT64, &finished) < 0) finished = 0;
    H5Aclose(attr);
  }
  H5Fclose(file);
  H5Eclear2(H5E_DEFAULT);
  return finished == 1;
}

std::vector<hsize_t> OutputFile::snapshot_tail() const {
  std::vector<hsize_t> tail = replica_axis();
  tail.insert(tail.end(), dims_.begin(), dims_.end());
  if (snapshot_bit_packed_) tail.back() /= 8;
  if (snapshot_components_ > 1) tail.push_back(static_cast<hsize_t>(snapshot_components_));
  return tail;
}

void OutputFile::write_step_tuning(const StepTuning& tuning) {
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
  const hid_t root = file_.get();
  for (const auto& [name, value] : values) {
    if (H5_CHECK(H5Aexists(root, name)) > 0) H5_CHECK(H5Adelete(root, name));
    write_numeric_attribute(root, name, H5T_NATIVE_DOUBLE, &value, 1, true);
  }
}

std::vector<hsize_t> OutputFile::replica_axis() const {
  return replicas_ > 1 ? std::vector<hsize_t>{static_cast<hsize_t>(replicas_)}
                       : std::vector<hsize_t>{};
}

std::vector<hsize_t> OutputFile::chunk_rows(hsize_t rows) const {
  std::vector<hsize_t> chunk{rows};
  if (replicas_ > 1) chunk.push_back(static_cast<hsize_t>(replicas_));
  return chunk;
}

void OutputFile::write_histograms(const std::vector<ExactHistogram>& histograms) {
  if (H5_CHECK(H5Lexists(file_.get(), "histograms", H5P_DEFAULT)) > 0) {
    H5_CHECK(H5Ldelete(file_.get(), "histograms", H5P_DEFAULT));
  }
  H5Id group(H5_CHECK(H5Gcreate2(file_.get(), "histograms", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)),
             H5Gclose);
  for (const ExactHistogram& h : histograms) {
    H5Id sub(
        H5_CHECK(H5Gcreate2(group.get(), h.name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)),
        H5Gclose);
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

void OutputFile::flush() {
  // Data first, then the lengths that vouch for it, then the lengths themselves.
  H5_CHECK(H5Fflush(file_.get(), H5F_SCOPE_GLOBAL));
  set_int64_attribute(observables_group_.get(), "committed_length", measurements_);
  set_int64_attribute(snapshots_group_.get(), "committed_length", snapshots_);
  if (series_group_.get() >= 0)
    set_int64_attribute(series_group_.get(), "committed_length", series_length_);
  if (timeslice_group_.get() >= 0)
    set_int64_attribute(timeslice_group_.get(), "committed_length", timeslice_length_);
  H5_CHECK(H5Fflush(file_.get(), H5F_SCOPE_GLOBAL));
}

void OutputFile::close() {
  if (file_.get() < 0) return;
  flush();
  observable_sets_.clear();
  sweep_set_.reset();
  snapshot_set_.reset();
  snapshot_sweep_set_.reset();
  observables_group_.reset();
  snapshots_group_.reset();
  series_sets_.clear();
  series_sweep_set_.reset();
  series_group_.reset();
  structure_factor_group_.reset();
  timeslice_set_.reset();
  timeslice_sweep_set_.reset();
  timeslice_group_.reset();
  H5_CHECK(
      H5Fclose(file_.release()));  // closed here, not in a destructor, so failures are reported
  publish();
}

}  // namespace lattica

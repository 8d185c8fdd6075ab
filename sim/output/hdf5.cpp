#include "sim/output/hdf5.hpp"

#include <fcntl.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

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

[[noreturn]] void throw_hdf(const char* call, const char* file, int line) {
  std::string stack;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, append_error, &stack);
  H5Eclear2(H5E_DEFAULT);
  throw HdfError(std::string("HDF5 error at ") + file + ":" + std::to_string(line) + ": " + call +
                 (stack.empty() ? "" : ": " + stack));
}

int64_t bytes_of(hid_t type, const std::vector<hsize_t>& shape) {
  auto bytes = static_cast<int64_t>(H5_CHECK(H5Tget_size(type)));
  for (hsize_t n : shape) bytes *= static_cast<int64_t>(n);
  return bytes;
}

void reserve_file_space(hid_t object, int64_t bytes) {
  constexpr int64_t kMetadataRoom = int64_t(64) << 10;
  H5Id file(H5_CHECK(H5Iget_file_id(object)), H5Fclose);
  H5Id access(H5_CHECK(H5Fget_access_plist(file.get())), H5Pclose);
  if (H5_CHECK(H5Pget_driver(access.get())) != H5FD_SEC2) return;  // MPI-IO, in-memory files
  haddr_t allocated = 0;
  H5_CHECK(H5Fget_eoa(file.get(), &allocated));
  void* handle = nullptr;
  H5_CHECK(H5Fget_vfd_handle(file.get(), access.get(), &handle));
  // fallocate, not posix_fallocate: where the filesystem cannot reserve (ZFS, some network
  // filesystems) glibc's posix_fallocate would write the room block by block instead.
  if (fallocate(*static_cast<int*>(handle), 0, static_cast<off_t>(allocated),
                static_cast<off_t>(bytes + kMetadataRoom)) == 0)
    return;
  const int error = errno;
  if (error == EOPNOTSUPP || error == ENOSYS || error == EINVAL) return;  // no reservation there
  char name[4096] = {};
  H5Fget_name(file.get(), name, sizeof name);
  throw HdfError(std::string("cannot write ") + name + ": " + std::strerror(error) +
                 " (no room for the next " + std::to_string(bytes) +
                 " bytes and HDF5's metadata; the file is as its last flush left it)");
}

void quiet_hdf5() {
  static const bool done = [] {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    return true;
  }();
  (void)done;
}

H5Id file_access() {
  H5Id fapl(H5_CHECK(H5Pcreate(H5P_FILE_ACCESS)), H5Pclose);
  if (!std::getenv("HDF5_USE_FILE_LOCKING")) H5_CHECK(H5Pset_file_locking(fapl.get(), true, true));
  return fapl;
}

H5Id create_group(hid_t parent, const char* name) {
  return H5Id(H5_CHECK(H5Gcreate2(parent, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)), H5Gclose);
}

H5Id open_group(hid_t parent, const char* name) {
  return H5Id(H5_CHECK(H5Gopen2(parent, name, H5P_DEFAULT)), H5Gclose);
}

H5Id open_set(hid_t parent, const char* name) {
  return H5Id(H5_CHECK(H5Dopen2(parent, name, H5P_DEFAULT)), H5Dclose);
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

void replace_string_attribute(hid_t object, const char* name, const std::string& value) {
  if (H5_CHECK(H5Aexists(object, name)) > 0) H5_CHECK(H5Adelete(object, name));
  write_string_attribute(object, name, value);
}

std::string read_string_attribute(hid_t object, const char* name) {
  if (H5_CHECK(H5Aexists(object, name)) <= 0) return "";
  H5Id attr(H5_CHECK(H5Aopen(object, name, H5P_DEFAULT)), H5Aclose);
  H5Id type(H5_CHECK(H5Aget_type(attr.get())), H5Tclose);
  char* text = nullptr;
  H5_CHECK(H5Aread(attr.get(), type.get(), &text));
  std::string value = text ? text : "";
  H5free_memory(text);
  return value;
}

void set_int64_attribute(hid_t object, const char* name, int64_t value) {
  if (H5_CHECK(H5Aexists(object, name)) == 0) {
    write_numeric_attribute(object, name, H5T_NATIVE_INT64, &value, 1, true);
    return;
  }
  H5Id attr(H5_CHECK(H5Aopen(object, name, H5P_DEFAULT)), H5Aclose);
  H5_CHECK(H5Awrite(attr.get(), H5T_NATIVE_INT64, &value));
}

void replace_double_attribute(hid_t object, const char* name, double value) {
  if (H5_CHECK(H5Aexists(object, name)) > 0) H5_CHECK(H5Adelete(object, name));
  write_numeric_attribute(object, name, H5T_NATIVE_DOUBLE, &value, 1, true);
}

}  // namespace lattica

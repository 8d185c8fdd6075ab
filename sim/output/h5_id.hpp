#pragma once
// HDF5 identifiers owned RAII-style, and the error every HDF5 failure becomes.

#include <hdf5.h>

#include <stdexcept>

namespace lattica {

/// An HDF5 failure (I/O, disk full, bad path): exit code 3.
class HdfError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Owns one HDF5 identifier and closes it with the matching H5?close.
class H5Id {
 public:
  H5Id() = default;
  H5Id(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  H5Id(H5Id&& o) noexcept : id_(o.id_), close_(o.close_) { o.id_ = H5I_INVALID_HID; }
  H5Id& operator=(H5Id&& o) noexcept;
  H5Id(const H5Id&) = delete;
  H5Id& operator=(const H5Id&) = delete;
  ~H5Id() { reset(); }
  hid_t get() const { return id_; }
  /// Gives up ownership without closing.
  hid_t release() {
    const hid_t id = id_;
    id_ = H5I_INVALID_HID;
    return id;
  }
  /// Closes the identifier, if any (a failed close cannot be reported from a destructor).
  void reset();

 private:
  hid_t id_ = H5I_INVALID_HID;
  herr_t (*close_)(hid_t) = nullptr;
};

}  // namespace lattica

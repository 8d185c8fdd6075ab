#pragma once
// Bytes an engine will allocate, computed from its settings before anything is allocated, so
// a lattice that does not fit is refused with a clear message.

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "sim/engine/settings.hpp"

namespace lattica {

/// Largest configuration (bytes, every replica) that the packed Ising engine stages for an
/// overlapped snapshot; larger ones are unpacked and copied a chunk at a time, synchronously.
constexpr size_t kMaxStagedSnapshotBytes = size_t(1) << 30;

/// Whether a packed Ising engine keeps a lexicographic byte copy: for spectral measurements,
/// and for overlapped snapshots of lattices up to kMaxStagedSnapshotBytes.
inline bool packed_keeps_lexicographic(const EngineSettings& s) {
  size_t sites = static_cast<size_t>(s.replicas);
  for (int64_t l : s.dims) sites *= static_cast<size_t>(l);
  return s.structure_factor_every > 0 || s.timeslice_every > 0 ||
         (s.snapshots && !s.snapshot_bits && sites <= kMaxStagedSnapshotBytes);
}

/// The most bytes of one replica's queued measurement record, of any model.
constexpr size_t kMaxMeasurementBytes = 128;

/// Bytes of the packed engine's bounded buffer for conversions to and from lexicographic bytes.
constexpr size_t kPackedChunkBytes = size_t(1) << 24;

/// Components of the order-parameter field the spectra transform (Model::field_components).
inline int field_components(const EngineSettings& s) {
  switch (s.model) {
    case ModelKind::on:
      return s.n;
    case ModelKind::potts:
      return 2;
    default:
      return 1;
  }
}

/// Bytes of the spectral measurements' buffers: the order-parameter field (double), and for
/// the structure factor its half spectrum (8 bytes a site and component) and the running sums
/// of the power (8 a site). The FFT's work area is fft_work_bytes.
inline size_t spectral_bytes(const EngineSettings& s) {
  const size_t sites = static_cast<size_t>(s.replicas) * static_cast<size_t>(volume_of(s.dims));
  const size_t c = static_cast<size_t>(field_components(s));
  size_t bytes = 0;
  if (s.structure_factor_every > 0 || s.timeslice_every > 0) bytes += sites * 8 * c;
  if (s.structure_factor_every > 0) bytes += sites * (8 * c + 8);
  return bytes;
}

/// Whether a pass of the sequence moves the field through its Fourier modes.
inline bool uses_fourier(const EngineSettings& s) {
  for (UpdateAlgorithm a : s.sequence) {
    if (is_whole_lattice(a)) return true;
  }
  return false;
}

/// Bytes of the one cuFFT work area that every FFT of an engine shares (CufftWorkArea): the
/// largest plan's, about its data's size (8 bytes a site and component) for many extents.
inline size_t fft_work_bytes(const EngineSettings& s) {
  const size_t sites = static_cast<size_t>(s.replicas) * static_cast<size_t>(volume_of(s.dims));
  if (s.structure_factor_every > 0) return sites * 8 * static_cast<size_t>(field_components(s));
  return uses_fourier(s) ? sites * 8 : 0;
}

/// Bytes an engine of these settings allocates on its backend (spins and their lexicographic
/// copy, per-site acceptance counts, queued measurements, the spectral and Langevin buffers,
/// scratch), so a lattice that would not fit is refused before anything is allocated.
inline size_t engine_bytes(const EngineSettings& s) {
  size_t volume = 1;
  for (int64_t l : s.dims) volume *= static_cast<size_t>(l);
  const size_t sites = volume * static_cast<size_t>(s.replicas);
  size_t bytes = static_cast<size_t>(s.measurement_capacity) * s.replicas * kMaxMeasurementBytes +
                 (size_t(1) << 22);
  if (uses_packed_ising(s)) {
    // Packed spins, the conversion buffer and, for spectral measurements or staged
    // snapshots, a byte copy.
    bytes += sites / 8 + kPackedChunkBytes + (packed_keeps_lexicographic(s) ? sites : 0);
  } else {
    bytes += sites * (2 * site_bytes(s) + 1);
  }
  // Bit-packed snapshots: their staging copy (or a chunk at a time).
  if (s.snapshot_bits)
    bytes += sites / 8 <= kMaxStagedSnapshotBytes ? sites / 8 : kPackedChunkBytes;
  bytes += spectral_bytes(s) + fft_work_bytes(s);
  // Cluster moves: a bond mask and a 32-bit label per site, and the cluster sizes.
  for (UpdateAlgorithm a : s.sequence) {
    if (is_cluster(a)) {
      bytes += sites * (1 + 4 + 4);
      break;
    }
  }
  // Fourier-accelerated Langevin: the proposal, two double fields, two half spectra, 1 / M'(k)
  // on the half spectrum.
  if (uses_fourier(s)) bytes += sites * (site_bytes(s) + 2 * 8 + 2 * 8) + volume * 4;
  return bytes;
}

/// What a rank of a decomposed run adds to engine_bytes of its box (`box_sites` sites with
/// the ghosts) for the distributed FFT: the packed pieces of the transposes (a half spectrum;
/// with several replicas or components the received pieces too, and where the columns do not
/// fit the spectrum's buffer, `columns_fit` false, a buffer for them) and, unless the boxes
/// split axis 0 only (then a box is its slab and a block of the lexicographic copy), the slab,
/// the buffers of the moves between box and slab and the gathered interior.
inline size_t decomposed_fourier_bytes(const EngineSettings& s, int64_t box_sites,
                                       bool split_axis0_only, bool columns_fit) {
  if (s.structure_factor_every <= 0 && s.timeslice_every <= 0 && !uses_fourier(s)) return 0;
  const size_t sites = static_cast<size_t>(s.replicas) * static_cast<size_t>(box_sites);
  const size_t c = static_cast<size_t>(std::max(field_components(s), 1));
  size_t bytes = sites * 8 * c;
  if (s.replicas > 1 || c > 1) bytes += sites * 8 * c;
  if (!columns_fit) bytes += sites * 8 * c;
  if (!split_axis0_only || s.replicas > 1) bytes += sites * (8 * c + 16 * c + site_bytes(s));
  return bytes;
}

}  // namespace lattica

#pragma once
// One rank's box of a decomposed lattice (issue 8), for LatticeEngine and PackedIsing: its
// geometry (Checkerboard::make_box with a ghost layer on each side of every split axis), the
// row blocks it updates and measures, and the halo exchange between colours.
//
// One colour's pass: the boundary layers first, then the deep interior on the main stream while
// that colour's layers are exchanged with the neighbouring boxes on the backend's side stream
// (which waits for the boundary only), and the next pass waits for the exchange. Ghost sites
// are never updated (only exchanged), so the chain of every interior site is the whole
// lattice's, bit for bit, on any grid.

#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

#include "kernels/lattice/checkerboard.hpp"
#include "kernels/lattice/row_block.hpp"
#include "kernels/transpose/move_lines.hpp"
#include "sim/communicator.hpp"
#include "sim/decomposition.hpp"
#include "sim/engine/engine.hpp"
#include "sim/parallel/slab_fft.hpp"

namespace lattica {

/// Whether an engine of these settings runs on a box of a decomposed lattice.
inline bool decomposed(const EngineSettings& s) {
  return s.communicator && s.communicator->size() > 1;
}

/// The geometry of this rank's box; the whole lattice when not decomposed.
template <int D>
Checkerboard<D> engine_lattice(const EngineSettings& s) {
  if (!decomposed(s)) return Checkerboard<D>::make(s.dims.data());
  const Decomposition d(s.dims, s.parallel_grid, s.communicator->size());
  const std::vector<int64_t> extents = d.storage_extents();
  const std::vector<int64_t> origin = d.storage_origin(s.communicator->rank());
  int64_t ghosts[D];
  for (int a = 0; a < D; ++a) ghosts[a] = d.split(a) ? 1 : 0;
  return Checkerboard<D>::make_box(extents.data(), s.dims.data(), origin.data(), ghosts);
}

template <class Exec, int D>
class DecomposedBox {
 public:
  /// Storage in `unit_bytes` units (a site, or a packed word of 32): `row_units` per row and
  /// colour, `replica_units` per replica, colour 1 `colour_units` after colour 0.
  DecomposedBox(const Exec& exec, const EngineSettings& settings, const Checkerboard<D>& lattice,
                size_t unit_bytes, int64_t row_units, int64_t colour_units, int64_t replica_units)
      : exec_(exec),
        comm_(*settings.communicator),
        decomposition_(settings.dims, settings.parallel_grid, settings.communicator->size()),
        lattice_(lattice),
        replicas_(settings.replicas),
        unit_bytes_(unit_bytes),
        colour_units_(colour_units),
        replica_units_(replica_units),
        slab_ffts_(exec, *settings.communicator, settings.dims) {
    if (D < 2)
      throw InputError("parallel: a 1D lattice cannot be split (its only axis is the last)");
    make_blocks();
    for (int a = 0; a < D - 1; ++a) {
      if (!decomposition_.split(a)) continue;
      Layer layer;
      layer.axis = a;
      layer.down = decomposition_.neighbour(comm_.rank(), a, -1);
      layer.up = decomposition_.neighbour(comm_.rank(), a, +1);
      layer.width = static_cast<int64_t>(lattice.stride[a] / lattice.half_last) * row_units;
      layer.runs = 1;
      for (int b = 0; b < a; ++b) layer.runs *= lattice.extent[b];
      layer.pitch = lattice.extent[a] * layer.width;
      layer.bytes = static_cast<size_t>(replicas_ * layer.runs * layer.width) * unit_bytes;
      layer.in_place = layer.runs == 1 && replicas_ == 1;
      for (auto* buffer :
           {&layer.send_down, &layer.send_up, &layer.receive_down, &layer.receive_up}) {
        if (!layer.in_place)
          *buffer = exec.template allocate<unsigned char>(static_cast<int64_t>(layer.bytes));
      }
      layers_.push_back(std::move(layer));
    }
    if (exec.side_stream()) comm_.enable_device(settings.cuda_device);
  }

  /// Local colour of global colour c (every box has the same origin parity).
  int local_colour(int c) const { return c ^ lattice_.colour_flip(); }
  Communicator& communicator() const { return comm_; }
  /// The interior rows (every site but the ghosts), for measurements.
  const RowBlock<D>& interior() const { return interior_; }

  /// One pass over local colour `colour` of `storage` (the units of every replica):
  /// update(block) queues the colour's update of a row block.
  /// The deep interior is queued before the exchange, so the host's time in NCCL's calls
  /// overlaps it too; the exchange waits only for the boundary.
  template <class Update>
  void update_colour(int colour, void* storage, const Update& update) {
    for (const RowBlock<D>& block : boundary_) update(block);
    exec_.side_waits_for_main();
    if (deep_.rows > 0) update(deep_);
    exchange(colour, static_cast<unsigned char*>(storage));
    exec_.main_waits_for_side();
  }

  /// Copies colour `colour`'s ghost layers from the neighbouring boxes (on the side stream).
  void exchange(int colour, unsigned char* storage) {
    const size_t unit = unit_bytes_;
    for (Layer& layer : layers_) {
      const int64_t extent = lattice_.extent[layer.axis];
      const size_t run = static_cast<size_t>(layer.width) * unit;
      const size_t pitch = static_cast<size_t>(layer.pitch) * unit;
      const size_t replica_bytes = static_cast<size_t>(layer.runs) * run;
      auto at = [&](int r, int64_t x) {
        return storage +
               static_cast<size_t>(r * replica_units_ + colour * colour_units_ + x * layer.width) *
                   unit;
      };
      if (layer.in_place) {
        comm_.exchange(layer.down, layer.up, at(0, 1), at(0, extent - 2), at(0, 0),
                       at(0, extent - 1), layer.bytes, exec_.side_stream());
        continue;
      }
      for (int r = 0; r < replicas_; ++r) {
        exec_.copy_rows(layer.send_down.data() + r * replica_bytes, run, at(r, 1), pitch, run,
                        layer.runs);
        exec_.copy_rows(layer.send_up.data() + r * replica_bytes, run, at(r, extent - 2), pitch,
                        run, layer.runs);
      }
      comm_.exchange(layer.down, layer.up, layer.send_down.data(), layer.send_up.data(),
                     layer.receive_down.data(), layer.receive_up.data(), layer.bytes,
                     exec_.side_stream());
      for (int r = 0; r < replicas_; ++r) {
        exec_.copy_rows(at(r, 0), pitch, layer.receive_down.data() + r * replica_bytes, run, run,
                        layer.runs);
        exec_.copy_rows(at(r, extent - 1), pitch, layer.receive_up.data() + r * replica_bytes, run,
                        run, layer.runs);
      }
    }
  }

  /// Gathers every rank's box configuration (lexicographic over the box's storage, ghosts
  /// included, `replicas` one after another, `site_bytes` a site) into `whole` (lexicographic,
  /// every replica) on rank 0; other ranks leave `whole` alone. Collective; one box at a time.
  void gather_whole(const void* box, void* whole, size_t site_bytes) {
    const int64_t box_sites = lattice_.volume();
    const size_t box_bytes = static_cast<size_t>(replicas_ * box_sites) * site_bytes;
    to_root_in_turn(box, box_bytes, [&](int rank, const void* from) {
      for_each_replica(from, box_sites, whole, volume_of(decomposition_.dims()), site_bytes,
                       [&](const unsigned char* in, unsigned char* out) {
                         decomposition_.box_into_whole(rank, in, out, site_bytes);
                       });
    });
  }

  /// Sends every rank's `bytes` at `mine` to rank 0 (collective), which calls take(rank, data)
  /// for every rank in order, its own first; one rank's data in memory at a time.
  template <class Take>
  void to_root_in_turn(const void* mine, size_t bytes, const Take& take) {
    if (comm_.rank() != 0) return comm_.send(mine, bytes, 0, kGatherTag);
    take(0, mine);
    std::vector<unsigned char> received(bytes);
    for (int rank = 1; rank < comm_.size(); ++rank) {
      comm_.receive(received.data(), bytes, rank, kGatherTag);
      take(rank, received.data());
    }
  }

  /// This rank's box (as gather_whole takes it) out of a whole configuration held by every rank.
  void box_from_whole(const void* whole, void* box, size_t site_bytes) const {
    for_each_replica(whole, volume_of(decomposition_.dims()), box, lattice_.volume(), site_bytes,
                     [&](const unsigned char* from, unsigned char* to) {
                       decomposition_.box_from_whole(comm_.rank(), from, to, site_bytes);
                     });
  }

  /// The interior of this rank's box (every replica, lexicographic over the box), out of its
  /// storage-shaped configuration (as gather_whole takes it).
  void interior_of_box(const void* box, void* interior, size_t site_bytes) const {
    for_each_replica(box, lattice_.volume(), interior, volume_of(decomposition_.box()), site_bytes,
                     [&](const unsigned char* from, unsigned char* to) {
                       decomposition_.interior_of_box(comm_.rank(), from, to, site_bytes);
                     });
  }

  /// The way back: `interior` (as interior_of_box gives it) into the storage-shaped `box`,
  /// whose ghost layers it leaves alone.
  void interior_into_box(const void* interior, void* box, size_t site_bytes) const {
    for_each_replica(interior, volume_of(decomposition_.box()), box, lattice_.volume(), site_bytes,
                     [&](const unsigned char* from, unsigned char* to) {
                       decomposition_.interior_into_box(comm_.rank(), from, to, site_bytes);
                     });
  }

  /// The box interior of `box`, the storage-shaped lexicographic configuration of every
  /// replica, as [replica][box interior sites]: in place where it is one block of `box` (one
  /// replica, only axis 0 split: the ghost rows are the first and last of axis 0), else
  /// gathered into `scratch` (allocated at the first use), which scatter_interior takes back.
  template <class T>
  T* interior_sites(T* box, typename Exec::template Buffer<T>& scratch) const {
    bool block = replicas_ == 1;
    for (int a = 1; a < D; ++a) block &= !decomposition_.split(a);
    if (block) return box + (decomposition_.split(0) ? lattice_.volume() / lattice_.extent[0] : 0);
    const int64_t sites = replicas_ * volume_of(decomposition_.box());
    if (scratch.size() != sites) scratch = exec_.template allocate<T>(sites);
    gather_interior(box, scratch.data(), sizeof(T));
    return scratch.data();
  }

  /// interior_of_box and interior_into_box in the backend's memory (device memory on a GPU),
  /// on its main stream: `box` is the storage-shaped lexicographic configuration of every
  /// replica, `interior` [replica][box interior sites].
  void gather_interior(const void* box, void* interior, size_t site_bytes) const {
    move_lines(exec_, interior, const_cast<void*>(box), interior_lines().data(),
               interior_lines().size(), line_bytes(site_bytes), true);
  }
  void scatter_interior(const void* interior, void* box, size_t site_bytes) const {
    move_lines(exec_, const_cast<void*>(interior), box, interior_lines().data(),
               interior_lines().size(), line_bytes(site_bytes), false);
  }

  /// Both colours' ghost layers from the neighbouring boxes, after a move of every site
  /// (`storage`: the units of every replica); later work on the main stream waits for them.
  void exchange_all(void* storage) {
    exec_.side_waits_for_main();
    for (int colour : {0, 1}) exchange(colour, static_cast<unsigned char*>(storage));
    exec_.main_waits_for_side();
  }

  const Decomposition& decomposition() const { return decomposition_; }
  /// The whole lattice's distributed FFTs over these ranks, shared by the rank's spectra and
  /// Langevin/MALA passes.
  SlabFfts<Exec>& slab_ffts() { return slab_ffts_; }

 private:
  static constexpr int kGatherTag = 7;

  /// copy(replica r of `from`, replica r of `to`) for every replica, of `from_sites` and
  /// `to_sites` sites of `site_bytes` each.
  template <class Copy>
  void for_each_replica(const void* from, int64_t from_sites, void* to, int64_t to_sites,
                        size_t site_bytes, const Copy& copy) const {
    for (int r = 0; r < replicas_; ++r) {
      copy(static_cast<const unsigned char*>(from) +
               static_cast<size_t>(r * from_sites) * site_bytes,
           static_cast<unsigned char*>(to) + static_cast<size_t>(r * to_sites) * site_bytes);
    }
  }

  /// Bytes of a line of the last axis (never split: the same in the box and its storage).
  size_t line_bytes(size_t site_bytes) const {
    return static_cast<size_t>(lattice_.extent[D - 1]) * site_bytes;
  }

  /// For every line of the last axis of the box interior, replica by replica in lexicographic
  /// order, its line in the storage-shaped box (made at the first use).
  const typename Exec::template Buffer<int64_t>& interior_lines() const {
    if (interior_lines_.size() > 0) return interior_lines_;
    const std::vector<int64_t>& box = decomposition_.box();
    int64_t lines = 1, storage_lines = 1;
    for (int a = 0; a < D - 1; ++a) {
      lines *= box[static_cast<size_t>(a)];
      storage_lines *= lattice_.extent[a];
    }
    std::vector<int64_t> table;
    table.reserve(static_cast<size_t>(replicas_ * lines));
    for (int r = 0; r < replicas_; ++r) {
      for (int64_t line = 0; line < lines; ++line) {
        int64_t rest = line, at = 0, stride = 1;
        for (int a = D - 2; a >= 0; --a) {
          const size_t u = static_cast<size_t>(a);
          const int64_t ghost = decomposition_.split(a) ? 1 : 0;  // the interior's offset
          at += (rest % box[u] + ghost) * stride;
          rest /= box[u];
          stride *= lattice_.extent[a];
        }
        table.push_back(r * storage_lines + at);
      }
    }
    interior_lines_ = exec_.template allocate<int64_t>(static_cast<int64_t>(table.size()));
    exec_.copy_to_device(table.data(), interior_lines_);
    return interior_lines_;
  }

  struct Layer {
    int axis = 0;
    int down = 0, up = 0;  ///< neighbouring ranks along the axis
    int64_t width = 0;     ///< units of one contiguous run of a layer (one colour)
    int64_t runs = 0;      ///< runs per layer and replica
    int64_t pitch = 0;     ///< units from one run to the next
    size_t bytes = 0;      ///< of one layer, every replica
    /// The layer is one contiguous run (axis 0, one replica): it is sent from
    /// and received into the storage itself, with no copies around the exchange.
    bool in_place = false;
    typename Exec::template Buffer<unsigned char> send_down, send_up, receive_down, receive_up;
  };

  /// Interior = boundary blocks + the deep interior, disjoint: boundary block (a, side) holds
  /// the rows at x_a = 1 or E_a - 2, deep along the split axes before a, interior after it.
  void make_blocks() {
    int64_t first[D] = {}, count[D] = {}, deep_first[D] = {}, deep_count[D] = {};
    for (int a = 0; a < D - 1; ++a) {
      const bool split = decomposition_.split(a);
      const int64_t e = lattice_.extent[a];
      first[a] = split ? 1 : 0;
      count[a] = split ? e - 2 : e;
      deep_first[a] = split ? 2 : 0;
      deep_count[a] = split ? e - 4 : e;  // 0 for boxes of 2: then everything is boundary
    }
    interior_ = RowBlock<D>::make(lattice_, first, count);
    for (int a = 0; a < D - 1; ++a) {
      if (!decomposition_.split(a)) continue;
      int64_t f[D], c[D];
      for (int b = 0; b < D - 1; ++b) {
        f[b] = b < a ? deep_first[b] : first[b];
        c[b] = b < a ? deep_count[b] : count[b];
      }
      const int64_t e = lattice_.extent[a];
      for (int64_t x : {int64_t(1), e - 2}) {
        f[a] = x;
        c[a] = 1;
        const RowBlock<D> block = RowBlock<D>::make(lattice_, f, c);
        if (block.rows > 0) boundary_.push_back(block);
      }
    }
    deep_ = RowBlock<D>::make(lattice_, deep_first, deep_count);
  }

  const Exec& exec_;
  Communicator& comm_;
  Decomposition decomposition_;
  Checkerboard<D> lattice_;
  int replicas_;
  size_t unit_bytes_;
  int64_t colour_units_, replica_units_;
  RowBlock<D> interior_{}, deep_{};
  std::vector<RowBlock<D>> boundary_;
  std::vector<Layer> layers_;
  mutable typename Exec::template Buffer<int64_t> interior_lines_;  ///< see interior_lines()
  SlabFfts<Exec> slab_ffts_;
};

}  // namespace lattica

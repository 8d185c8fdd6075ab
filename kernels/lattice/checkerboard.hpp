#pragma once
// Geometry of a periodic D-dimensional hypercubic lattice stored in checkerboard order.
//
// Sites are named globally by their lexicographic index (row-major, last axis fastest).
// Colour = (sum of coordinates) mod 2. Storage holds colour 0 first, then colour 1, each of
// V/2 sites; inside a colour, the site with lexicographic index i sits at i / 2. This works
// because the last extent is even, so each pair (2k, 2k+1) along the last axis holds one site
// of each colour. Every extent must be even for the lattice to be bipartite under periodic
// boundaries, which is what lets one colour be updated in parallel.

#include <cstdint>

#include "kernels/common/fast_divisor.hpp"
#include "kernels/common/host_device.hpp"

namespace lattica {

template <int D>
struct Checkerboard {
  static_assert(D >= 1 && D <= 4, "1 to 4 dimensions");
  int64_t extent[D];    ///< L_0 .. L_{D-1}, all even
  int64_t stride[D];    ///< step in the colour-local index for +1 along axis a < D-1
  int64_t half_last;    ///< L_{D-1} / 2
  int64_t half_volume;  ///< V / 2, the number of sites of one colour
  // A box of a larger periodic lattice (domain decomposition: one rank's sites with ghost
  // layers around them), or by default the whole lattice (origin 0, global = local). Random
  // numbers are keyed by the global site, so a box updates its sites exactly as the whole
  // lattice does. The functions that name sites take kBoxed: true names them globally, false
  // (the whole lattice, where both agree) by the local index. The last axis is never split:
  // rows, and the random-number groups along them, stay whole.
  int64_t origin[D];         ///< global coordinate of local coordinate 0 (last axis: 0)
  int64_t global_extent[D];  ///< extents of the whole lattice
  int64_t global_stride[D];  ///< lexicographic step for +1 along axis a of the whole lattice
  // The sites a box updates (its interior) never wrap around the whole lattice, so their global
  // name is their local lexicographic index plus a linear function of their coordinates:
  // interior_site() costs an add and a multiply-add per axis below D-2 (its gap is 0 on a slab,
  // a box split along axis 0 only), with no branch. The wrapping global_site() with a slab
  // shortcut chosen at run time cost 5 % of a phi^4 update on an H200 (box_update_bench).
  int64_t interior_offset;  ///< the global name of the interior's local lexicographic index 0
  int64_t stride_gap[D];    ///< global minus local lexicographic stride (0 for axes >= D-2)
  // Divisions of site indices by multiply-high: a 64-bit division would cost the GPU about as
  // much as the rest of a site's geometry.
  FastDivisor64 by_extent[D];
  FastDivisor64 by_half_last;
  FastDivisor64 by_half_volume;
  // The divisors decompose() uses, in 32 bits (axes 1 .. D-2 and half_last), set where every
  // site index fits them (fits_32_bits(), the usual case), so a GPU site update can locate its
  // sites in 32-bit arithmetic: that took an O(3) over-relaxation from 323 to 261 instructions
  // per update on an H200.
  FastDivisor by_extent_32[D];
  FastDivisor by_half_last_32;

  /// Builds the geometry. Precondition: every extent is even and >= 2.
  static Checkerboard make(const int64_t* extents) {
    const int64_t origin[D] = {}, ghosts[D] = {};
    return make_box(extents, extents, origin, ghosts);
  }

  /// The box of local extents `extents` whose local coordinate 0 sits at global coordinate
  /// `origin` (taken modulo the global extents) of the periodic lattice `global_extents`, with
  /// `ghosts[a]` ghost layers on each side along axis a. Preconditions: every extent is even and
  /// >= 2; extents[D-1] == global_extents[D-1] and origin[D-1] == 0; the interior (local
  /// coordinates ghosts[a] .. extents[a] - ghosts[a] - 1) does not wrap around the whole
  /// lattice. The local lattice is still periodic in itself, so only its interior (sites whose
  /// neighbours are all in the box) is updated as in the whole lattice.
  static Checkerboard make_box(const int64_t* extents, const int64_t* global_extents,
                               const int64_t* origin, const int64_t* ghosts) {
    Checkerboard g{};
    for (int a = 0; a < D; ++a) g.extent[a] = extents[a];
    g.half_last = extents[D - 1] / 2;
    int64_t s = g.half_last;
    for (int a = D - 2; a >= 0; --a) {
      g.stride[a] = s;
      s *= extents[a];
    }
    g.stride[D - 1] = 1;
    g.half_volume = s;
    for (int a = 0; a < D; ++a) g.by_extent[a] = FastDivisor64::make(extents[a]);
    g.by_half_last = FastDivisor64::make(g.half_last);
    g.by_half_volume = FastDivisor64::make(g.half_volume);
    if (g.fits_32_bits()) {
      for (int a = 1; a < D - 1; ++a)  // below V / 4 <= 2^30
        g.by_extent_32[a] = FastDivisor::make(static_cast<uint32_t>(extents[a]));
      g.by_half_last_32 = FastDivisor::make(static_cast<uint32_t>(g.half_last));
    }
    int64_t global = 1, local = 1;
    g.interior_offset = 0;
    for (int a = D - 1; a >= 0; --a) {
      const int64_t length = global_extents[a];
      g.global_extent[a] = length;
      g.origin[a] = ((origin[a] % length) + length) % length;
      g.global_stride[a] = global;
      g.stride_gap[a] = global - local;
      // Local coordinate 0 of the interior's frame: the first interior site's global
      // coordinate, less the ghosts before it (negative where the lower ghosts wrap).
      g.interior_offset += (((g.origin[a] + ghosts[a]) % length) - ghosts[a]) * global;
      global *= length;
      local *= extents[a];
    }
    return g;
  }

  /// Global colour = local colour ^ colour_flip() (the parity of the box's origin).
  int colour_flip() const {
    int64_t sum = 0;
    for (int a = 0; a < D; ++a) sum += origin[a];
    return static_cast<int>(sum & 1);
  }

  /// The global name of interior site `local` (local lexicographic index) at local
  /// coordinates x (axes < D-1).
  LATTICA_HD_INLINE int64_t interior_site(const int64_t (&x)[D], int64_t local) const {
    int64_t site = local + interior_offset;
    for (int a = 0; a < D - 2; ++a) site += x[a] * stride_gap[a];
    return site;
  }

  /// Global lexicographic index of any site of the box, ghosts included, at local coordinates
  /// x (axes < D-1) and `last` along the last axis.
  LATTICA_HD_INLINE int64_t global_site(const int64_t (&x)[D], int64_t last) const {
    int64_t site = last;
    for (int a = 0; a < D - 1; ++a) {
      int64_t g = x[a] + origin[a];
      if (g >= global_extent[a]) g -= global_extent[a];  // x < extent <= global extent
      site += g * global_stride[a];
    }
    return site;
  }

  LATTICA_HD int64_t volume() const { return 2 * half_volume; }

  /// Whether every lexicographic site index (so every colour-local one) of this lattice fits in
  /// 32 unsigned bits, so that decompose() and locate_run() may compute in uint32_t. (The
  /// cluster code's geometry also takes rows of one site, half_last 0: never in 32 bits.)
  LATTICA_HD_INLINE bool fits_32_bits() const {
    return half_last >= 1 && half_volume <= (int64_t(1) << 31);
  }

  /// n / d with the divisor of the index type: Index is int64_t, or uint32_t where
  /// fits_32_bits().
  LATTICA_HD_INLINE static int64_t divide(const FastDivisor64& d, const FastDivisor&, int64_t n) {
    return d.divide(n);
  }
  LATTICA_HD_INLINE static uint32_t divide(const FastDivisor64&, const FastDivisor& d, uint32_t n) {
    return d.divide(n);
  }

  /// Coordinates of axes < D-1 of colour-local site j, and its position h along the last
  /// axis in pairs; returns the parity offset p, so the last coordinate is 2h + p.
  /// Precondition: 0 <= j < half_volume (so what is left for axis 0 is its coordinate, and
  /// it takes no division: a 64-bit one costs about 14 instructions on the GPU). Index is
  /// int64_t, or uint32_t where fits_32_bits().
  template <class Index>
  LATTICA_HD_INLINE int decompose(Index j, int colour, Index (&x)[D], Index& h) const {
    Index rest = divide(by_half_last, by_half_last_32, j);
    h = j - rest * static_cast<Index>(half_last);
    int parity = colour;
    for (int a = D - 2; a >= 1; --a) {
      const Index q = divide(by_extent[a], by_extent_32[a], rest);
      x[a] = rest - q * static_cast<Index>(extent[a]);
      rest = q;
      parity += static_cast<int>(x[a]);
    }
    if constexpr (D >= 2) {
      x[0] = rest;
      parity += static_cast<int>(rest);
    }
    return parity & 1;
  }

  /// Lexicographic index (in this lattice) of colour-local site j.
  LATTICA_HD_INLINE int64_t lex_index(int64_t j, int colour) const {
    int64_t x[D];
    int64_t h;
    return 2 * j + decompose(j, colour, x, h);
  }

  /// The site's name in the whole lattice, which keys its random numbers: its lexicographic
  /// index there (kBoxed: any site of a box, ghosts included; see origin).
  template <bool kBoxed = false>
  LATTICA_HD_INLINE int64_t site_index(int64_t j, int colour) const {
    int64_t x[D];
    int64_t h;
    const int p = decompose(j, colour, x, h);
    return kBoxed ? global_site(x, 2 * h + p) : 2 * j + p;
  }

  /// Where the neighbours of a run of kRun colour-local sites j .. j + kRun - 1 of one row lie
  /// (the site at pair h + r of the last axis has the neighbours of the first site, shifted by
  /// r), so a thread that updates the run locates it once. Precondition: j % kRun == 0 and
  /// half_last % kRun == 0 (the run stays in its row). Index is int64_t, or uint32_t where
  /// fits_32_bits() and not kBoxed.
  template <class Index = int64_t>
  struct RunNeighbours {
    /// Colour-local indices in the other colour: [2a], [2a + 1] the first site's neighbours along
    /// +axis a and -axis a (a < D-1); [2D-2] the pair h of the run's own row; [2D-1] the pair
    /// beside the run (wrapped): h - 1 for parity 0, h + kRun for parity 1.
    Index other[2 * D];
    int parity;  ///< the last coordinate of site j + r is 2 (h + r) + parity
    Index site;  ///< the first site's site_index<kBoxed>(); site j + r's is site + 2r
  };
  template <int kRun, bool kBoxed = false, class Index = int64_t>
  LATTICA_HD_INLINE RunNeighbours<Index> locate_run(Index j, int colour) const {
    static_assert(!kBoxed || sizeof(Index) == 8, "a box names its sites globally, in 64 bits");
    RunNeighbours<Index> n;
    Index x[D];
    Index h;
    n.parity = decompose(j, colour, x, h);
    for (int a = 0; a < D - 1; ++a) {
      const auto length = static_cast<Index>(extent[a]), step = static_cast<Index>(stride[a]);
      const Index wrap = (length - 1) * step;
      n.other[2 * a] = x[a] + 1 == length ? j - wrap : j + step;
      n.other[2 * a + 1] = x[a] == 0 ? j + wrap : j - step;
    }
    // Along the last axis site j + r is at 2 (h + r) + parity; its neighbours are the
    // other-colour sites of pair h + r and of the pair beside it on the parity's side.
    const Index row = j - h, pairs = static_cast<Index>(half_last);
    n.other[2 * D - 2] = j;
    n.other[2 * D - 1] =
        n.parity ? row + (h + kRun == pairs ? 0 : h + kRun) : row + (h == 0 ? pairs - 1 : h - 1);
    const Index site = 2 * j + static_cast<Index>(n.parity);
    if constexpr (kBoxed) {
      n.site = interior_site(x, site);
    } else {
      n.site = site;
    }
    return n;
  }

  /// Calls visit(k) for each of the 2D neighbours of colour-local site j, in the order
  /// +axis 0, -axis 0, +axis 1, -axis 1, ..., so models can tell bonds' axes and orientations.
  /// Every neighbour has the other colour and k is its colour-local index. Returns the site's
  /// site_index<kBoxed>() (kBoxed: j must be an interior site of the box).
  template <bool kBoxed = false, class Visit>
  LATTICA_HD_INLINE int64_t visit_neighbours(int64_t j, int colour, Visit&& visit) const {
    const RunNeighbours<> n = locate_run<1, kBoxed>(j, colour);
    for (int k = 0; k < 2 * D - 2; ++k) visit(n.other[k]);
    const int64_t pair = n.other[2 * D - 2], beside = n.other[2 * D - 1];
    visit(n.parity ? beside : pair);  // + last axis
    visit(n.parity ? pair : beside);  // - last axis
    return n.site;
  }

  /// Position of colour-local site j in its random-number group (kLanesPerGroup sites of one
  /// row along the last axis, consecutive in storage; the last group of a row may be shorter).
  LATTICA_HD_INLINE int lane(int64_t j) const {
    // Rows of whole groups (the usual case) need no division.
    return static_cast<int>(((half_last & 31) == 0 ? j : j % half_last) & 31);
  }

  /// Storage position (colour * V/2 + colour-local index) of lexicographic site i.
  LATTICA_HD_INLINE int64_t storage_index(int64_t i) const {
    int64_t rest = i;
    int64_t coordinate_sum = 0;
    for (int a = D - 1; a >= 0; --a) {
      const int64_t q = by_extent[a].divide(rest);
      coordinate_sum += rest - q * extent[a];
      rest = q;
    }
    return (coordinate_sum & 1) * half_volume + i / 2;
  }
};

/// Copies checkerboard storage into lexicographic order; functor over copy * V + lexicographic
/// site, for any number of lattices stored one after another.
template <int D, class T>
struct GatherLexicographic {
  Checkerboard<D> lattice;
  const T* storage;
  T* lexicographic;

  LATTICA_HD_INLINE void operator()(int64_t i) const {
    const int64_t copy = i / lattice.volume();
    const int64_t offset = copy * lattice.volume();
    lexicographic[i] = storage[offset + lattice.storage_index(i - offset)];
  }
};

}  // namespace lattica

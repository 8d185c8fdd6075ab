// Ergodicity of the discrete models' checkerboard sweeps, proved exactly on small lattices.
//
// One sweep updates colour 0, then colour 1. During a colour's half-sweep every site of that
// colour moves independently, given the other colour, so the configurations a half-sweep can
// reach from c are the product of each site's possible new values. Those come from the model's
// own update function (IsingModel::update, PottsModel::update) driven by scripted random words
// that pick each outcome the tables allow (ScriptedRandom): no second copy of the physics.
//
// The half-sweeps form a bipartite graph over (configuration, colour about to move); a closed
// class of the sweep chain is a bottom strongly connected component of it (one with no edge
// leaving), found by Tarjan's algorithm over all q^V configurations. A chain with more than one
// closed class is not ergodic: a replica that starts in a minor class never leaves it.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/lattice/checkerboard.hpp"
#include "kernels/models/ising.hpp"
#include "kernels/models/potts.hpp"

namespace lattica {
namespace {

/// A random source that replays given words: next() returns them in order, below(t) compares
/// the next one with t (what LaneRandom::below decides for a site whose word is that one).
struct ScriptedRandom {
  const uint32_t* words;
  int used = 0;
  uint32_t next() { return words[used++]; }
  bool below(uint32_t threshold) { return next() < threshold; }
};

/// Word sequences that together reach every outcome of one site update.
using Probes = std::vector<std::vector<uint32_t>>;

/// Ising, either algorithm: u = 0 flips whenever the table allows it, u = 2^32 - 1 only when
/// the flip is certain.
Probes ising_probes(const IsingParams&) { return {{0u}, {0xFFFFFFFFu}}; }

/// Potts Metropolis: for each of the q-1 proposals (the first word that picks it), the lowest
/// and highest acceptance word. Heat bath: for each state the first 64-bit word u whose
/// floor(u total / 2^64) falls in that state's weight interval; which states have weight > 0
/// depends on the neighbours, so the probes cover every cumulative boundary of every
/// neighbourhood (a word that lands in a zero-weight state's empty interval picks the next).
Probes potts_probes(const PottsParams& p, int d, UpdateAlgorithm algorithm) {
  Probes probes;
  if (algorithm == UpdateAlgorithm::metropolis) {
    for (int k = 0; k < p.q - 1; ++k) {
      const auto first = static_cast<uint32_t>(
          (static_cast<unsigned __int128>(k) * (uint64_t(1) << 32) + (p.q - 2)) / (p.q - 1));
      probes.push_back({first, 0u});
      probes.push_back({first, 0xFFFFFFFFu});
    }
    return probes;
  }
  // Heat bath: every state's weight is one of weight[c][z]; enumerate the neighbourhoods by
  // the equal-neighbour counts of each state (bounded by 2d) and place a word at each
  // cumulative boundary. Simpler and exhaustive for q <= 3: try every split of the 2d
  // neighbours among the q states.
  const int n = 2 * d;
  std::vector<int> counts(static_cast<size_t>(p.q), 0);
  auto add_boundaries = [&]() {
    unsigned __int128 total = 0;
    for (int s = 0; s < p.q; ++s) total += p.weight[counts[s]][s == 0];
    unsigned __int128 start = 0;
    for (int s = 0; s < p.q; ++s) {
      // Smallest u with floor(u total / 2^64) >= start: u = ceil(start 2^64 / total).
      const unsigned __int128 u = ((start << 64) + total - 1) / total;
      probes.push_back({static_cast<uint32_t>(u), static_cast<uint32_t>(u >> 32)});
      start += p.weight[counts[s]][s == 0];
    }
  };
  // counts over q states summing to n (q <= 3 here).
  for (int a = 0; a <= n; ++a) {
    for (int b = 0; a + b <= n; ++b) {
      if (p.q == 2 && a + b != n) continue;
      counts[0] = a;
      counts[1] = b;
      if (p.q == 3) counts[2] = n - a - b;
      add_boundaries();
    }
  }
  return probes;
}

/// A model's site values as digits 0 .. q-1 (Ising: 0 for -1, 1 for +1).
struct Digits {
  int q;
  bool ising;
  int value(int digit) const { return ising ? 2 * digit - 1 : digit; }
  int digit(int value) const { return ising ? (value + 1) / 2 : value; }
};

/// Bit set of the digits a site can take in one update from `old` with neighbours nb.
template <class Model, int D>
unsigned site_outcomes(const typename Model::Params& params, UpdateAlgorithm algorithm,
                       const Probes& probes, Digits digits, int old,
                       const int (&neighbours)[2 * D]) {
  typename Model::Spin nb[2 * D];
  for (int k = 0; k < 2 * D; ++k) nb[k] = static_cast<typename Model::Spin>(neighbours[k]);
  unsigned outcomes = 0;
  for (const std::vector<uint32_t>& words : probes) {
    ScriptedRandom random{words.data()};
    int accepted = 0;
    const int value = Model::template update<D>(
        params, algorithm, static_cast<typename Model::Spin>(old), nb, random, accepted);
    outcomes |= 1u << digits.digit(value);
  }
  return outcomes;
}

struct ClassCount {
  int closed = 0;       ///< bottom strongly connected components of the sweep graph
  int64_t largest = 0;  ///< configurations (before colour 0) in the largest of them
  int64_t configurations = 0;
};

/// Counts the closed classes of the sweep chain of Model on lattice `dims`.
template <class Model, int D>
ClassCount closed_classes(const std::vector<int64_t>& dims, const typename Model::Params& params,
                          UpdateAlgorithm algorithm, const Probes& probes, Digits digits) {
  int64_t extents[D];
  for (int a = 0; a < D; ++a) extents[a] = dims[a];
  const Checkerboard<D> lattice = Checkerboard<D>::make(extents);
  const int64_t half = lattice.half_volume;
  const int volume = static_cast<int>(2 * half);
  int64_t n = 1;
  std::vector<int64_t> power(static_cast<size_t>(volume));
  for (int i = 0; i < volume; ++i) {
    power[i] = n;
    n *= digits.q;
  }
  // Neighbours (colour-local indices in the other colour) of every site of each colour.
  std::vector<int> neighbour(static_cast<size_t>(2 * half * 2 * D));
  for (int colour = 0; colour < 2; ++colour) {
    for (int64_t j = 0; j < half; ++j) {
      int k = 0;
      lattice.visit_neighbours(j, colour, [&](int64_t m) {
        neighbour[((colour * half + j) * 2 * D) + k++] = static_cast<int>(m);
      });
    }
  }

  // Node v < n: configuration v before colour 0 moves; v >= n: configuration v - n before
  // colour 1 moves. Edges: the half-sweep of that colour.
  struct Frame {
    int64_t node;
    int64_t code;           ///< the successor being visited
    int sites;              ///< sites with more than one outcome
    int64_t weight[16];     ///< q^position of each such site
    int8_t options[16][4];  ///< their possible digits
    int8_t count[16];
    int8_t at[16];  ///< mixed-radix counter over the options
    bool started;
  };
  auto open = [&](int64_t node, Frame& f) {
    f.node = node;
    f.sites = 0;
    f.started = false;
    const int colour = node >= n;
    int64_t config = node - colour * n;
    int64_t base = config;
    for (int64_t j = 0; j < half; ++j) {
      const int64_t position = colour * half + j;
      const int old_digit = static_cast<int>((config / power[position]) % digits.q);
      int nb[2 * D];
      for (int k = 0; k < 2 * D; ++k) {
        const int64_t other = (1 - colour) * half + neighbour[(position * 2 * D) + k];
        nb[k] = digits.value(static_cast<int>((config / power[other]) % digits.q));
      }
      const unsigned outcomes =
          site_outcomes<Model, D>(params, algorithm, probes, digits, digits.value(old_digit), nb);
      int c = 0;
      int8_t option[4];
      for (int digit = 0; digit < digits.q; ++digit) {
        if ((outcomes >> digit) & 1u) option[c++] = static_cast<int8_t>(digit);
      }
      EXPECT_GE(c, 1);
      base += (option[0] - old_digit) * power[position];
      if (c > 1) {
        f.weight[f.sites] = power[position];
        f.count[f.sites] = static_cast<int8_t>(c);
        f.at[f.sites] = 0;
        for (int i = 0; i < c; ++i) f.options[f.sites][i] = option[i];
        ++f.sites;
      }
    }
    f.code = base;
  };
  // Advances f to its next successor; false when none is left.
  auto advance = [&](Frame& f) {
    if (!f.started) {
      f.started = true;
      return true;
    }
    for (int i = 0; i < f.sites; ++i) {
      const int at = f.at[i];
      if (at + 1 < f.count[i]) {
        f.code += (f.options[i][at + 1] - f.options[i][at]) * f.weight[i];
        f.at[i] = static_cast<int8_t>(at + 1);
        return true;
      }
      f.code += (f.options[i][0] - f.options[i][at]) * f.weight[i];
      f.at[i] = 0;
    }
    return false;
  };

  const int64_t nodes = 2 * n;
  std::vector<int64_t> index(static_cast<size_t>(nodes), -1), low(static_cast<size_t>(nodes));
  std::vector<uint8_t> leaves(static_cast<size_t>(nodes), 0),
      on_stack(static_cast<size_t>(nodes), 0);
  std::vector<int64_t> stack;
  std::vector<Frame> frames;
  int64_t next_index = 0;
  ClassCount result;
  result.configurations = n;
  for (int64_t root = 0; root < nodes; ++root) {
    if (index[root] >= 0) continue;
    frames.emplace_back();
    open(root, frames.back());
    index[root] = low[root] = next_index++;
    stack.push_back(root);
    on_stack[root] = 1;
    while (!frames.empty()) {
      Frame& f = frames.back();
      const int64_t v = f.node;
      if (advance(f)) {
        const int64_t w = (v < n ? n : 0) + f.code;  // the other colour moves next
        if (index[w] < 0) {
          index[w] = low[w] = next_index++;
          stack.push_back(w);
          on_stack[w] = 1;
          frames.emplace_back();
          open(w, frames.back());
        } else if (on_stack[w]) {
          low[v] = std::min(low[v], index[w]);
        } else {
          leaves[v] = 1;  // into a finished component: another one
        }
        continue;
      }
      frames.pop_back();
      if (!frames.empty()) {
        const int64_t parent = frames.back().node;
        low[parent] = std::min(low[parent], low[v]);
      }
      if (low[v] == index[v]) {
        bool closed = true;
        int64_t size = 0;
        int64_t w;
        do {
          w = stack.back();
          stack.pop_back();
          on_stack[w] = 0;
          closed = closed && !leaves[w];
          size += w < n;
        } while (w != v);
        if (closed) {
          ++result.closed;
          result.largest = std::max(result.largest, size);
        }
        if (!frames.empty()) leaves[frames.back().node] = 1;
      }
    }
  }
  return result;
}

std::string describe(const std::vector<int64_t>& dims) {
  std::string s;
  for (size_t a = 0; a < dims.size(); ++a) s += (a ? "x" : "") + std::to_string(dims[a]);
  return s;
}

/// Every small lattice the engine accepts (even extents >= 2), up to `max_volume` sites.
std::vector<std::vector<int64_t>> small_lattices(int max_volume) {
  std::vector<std::vector<int64_t>> all;
  for (int64_t l = 2; l <= max_volume; l += 2) all.push_back({l});
  for (int64_t a : {2, 4})
    for (int64_t b : {2, 4})
      if (a * b <= max_volume) all.push_back({a, b});
  for (const std::vector<int64_t>& box :
       {std::vector<int64_t>{2, 2, 2}, {4, 2, 2}, {2, 4, 2}, {2, 2, 4}, {2, 2, 2, 2}}) {
    int64_t v = 1;
    for (int64_t x : box) v *= x;
    if (v <= max_volume) all.push_back(box);
  }
  return all;
}

template <class Model>
ClassCount count_for(const std::vector<int64_t>& dims, const typename Model::Params& params,
                     UpdateAlgorithm algorithm, const Probes& probes, Digits digits) {
  switch (dims.size()) {
    case 1:
      return closed_classes<Model, 1>(dims, params, algorithm, probes, digits);
    case 2:
      return closed_classes<Model, 2>(dims, params, algorithm, probes, digits);
    case 3:
      return closed_classes<Model, 3>(dims, params, algorithm, probes, digits);
    default:
      return closed_classes<Model, 4>(dims, params, algorithm, probes, digits);
  }
}

/// (beta, h) points: beta = 0 and the 2D critical point, each with h = 0 and a generic field,
/// on every lattice; on lattices of up to 8 sites also a beta whose uphill acceptance is within
/// 2^-32 of 1, a low temperature whose uphill moves are rarer than 2^-32, and an integer field
/// (h = -2 gives dE = 0 moves with h != 0); heat bath on those smaller lattices.
struct Point {
  double beta, h;
};
std::vector<Point> points(int64_t volume) {
  std::vector<Point> all;
  for (double beta : {0.0, 0.44068679350977151})
    for (double h : {0.0, 0.37}) all.push_back({beta, h});
  if (volume <= 8) {
    for (double beta : {1e-11, 1.5})
      for (double h : {0.0, 0.37, -2.0}) all.push_back({beta, h});
    all.push_back({0.44068679350977151, -2.0});
  }
  return all;
}
std::vector<UpdateAlgorithm> algorithms(int64_t volume) {
  if (volume <= 8) return {UpdateAlgorithm::metropolis, UpdateAlgorithm::heatbath};
  return {UpdateAlgorithm::metropolis};
}
int64_t volume_of(const std::vector<int64_t>& dims) {
  int64_t v = 1;
  for (int64_t x : dims) v *= x;
  return v;
}

TEST(Ergodicity, IsingSweepsHaveOneClosedClass) {
  for (const std::vector<int64_t>& dims : small_lattices(16)) {
    const int d = static_cast<int>(dims.size());
    for (UpdateAlgorithm algorithm : algorithms(volume_of(dims))) {
      for (const Point& at : points(volume_of(dims))) {
        const IsingParams p = make_ising_params(d, at.beta, at.h, 1);
        const ClassCount c =
            count_for<IsingModel>(dims, p, algorithm, ising_probes(p), Digits{2, true});
        EXPECT_EQ(c.closed, 1) << "Ising " << describe(dims) << " "
                               << (algorithm == UpdateAlgorithm::metropolis ? "metropolis"
                                                                            : "heatbath")
                               << " beta " << at.beta << " h " << at.h << ": " << c.closed
                               << " closed classes, the largest of " << c.largest << " of "
                               << c.configurations << " configurations";
      }
    }
  }
}

TEST(Ergodicity, PottsSweepsHaveOneClosedClass) {
  for (int q : {2, 3}) {
    // q^V configurations: every lattice up to 16 sites for q = 2, up to 10 for q = 3.
    for (const std::vector<int64_t>& dims : small_lattices(q == 2 ? 16 : 10)) {
      const int d = static_cast<int>(dims.size());
      for (UpdateAlgorithm algorithm : algorithms(volume_of(dims))) {
        for (const Point& at : points(volume_of(dims))) {
          const PottsParams p = make_potts_params(d, q, at.beta, at.h, 1);
          const ClassCount c = count_for<PottsModel>(
              dims, p, algorithm, potts_probes(p, d, algorithm), Digits{q, false});
          EXPECT_EQ(c.closed, 1) << "Potts q = " << q << " " << describe(dims) << " "
                                 << (algorithm == UpdateAlgorithm::metropolis ? "metropolis"
                                                                              : "heatbath")
                                 << " beta " << at.beta << " h " << at.h << ": " << c.closed
                                 << " closed classes, the largest of " << c.largest << " of "
                                 << c.configurations << " configurations";
        }
      }
    }
  }
}

// The counting itself can see a broken chain: Metropolis with acceptance 1 at dE = 0 (the rule
// before this test existed) has the 18 two-state cycles of E = 0 on 4x4 besides its main class.
TEST(Ergodicity, CountsTheClassesOfANonErgodicRule) {
  IsingParams p = make_ising_params(2, 0.44068679350977151, 0.0, 1);
  for (int up = 0; up < 2; ++up) p.flip_threshold[0][up][2] = kThresholdOne;  // dE = 0: certain
  const ClassCount c = count_for<IsingModel>({4, 4}, p, UpdateAlgorithm::metropolis,
                                             ising_probes(p), Digits{2, true});
  EXPECT_EQ(c.closed, 19);
  // And at beta = 0 with certain flips every configuration alternates with its global flip.
  IsingParams hot = make_ising_params(2, 0.0, 0.0, 1);
  for (int up = 0; up < 2; ++up)
    for (int a = 0; a <= 4; ++a) hot.flip_threshold[0][up][a] = kThresholdOne;
  const ClassCount all = count_for<IsingModel>({2, 4}, hot, UpdateAlgorithm::metropolis,
                                               ising_probes(hot), Digits{2, true});
  EXPECT_EQ(all.closed, 128);
}

}  // namespace
}  // namespace lattica

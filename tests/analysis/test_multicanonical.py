#!/usr/bin/python3
"""`analysis multicanonical` on multicanonical runs of sim, against exact enumeration, and on
synthetic binned runs of the continuous models against closed forms.

    test_multicanonical.py [SIM_EXE]

With SIM_EXE: the 4x4 Ising model (all 2^16 states enumerated here): ln g(E) at every energy,
and reweighted to three betas <e>, C, U4 and the free energy per site, each within 5 of the
analysis' own jackknife errors over 32 blocks of walkers. The 8x8 Potts model with q = 10:
--first-order must find two peaks of equal height (checked on the returned ln g), ordered
below disordered, at a beta near the infinite-volume ln(1 + sqrt 10). The 4x4 Ising model in an
energy window from canonical weights: ln g relative to the window's lowest energy.

Without sim: /multicanonical groups of O(2) and phi^4 runs in binned energies, written here
with energies drawn exactly from g(E) W(E), g flat on the window: the reweighted <e> and C
have closed forms (a truncated exponential density) that bin centres or the wrong sign of
the coupling would miss by many errors; the O(2) and phi^4 Binder conventions; ln g flat; the
bins of energies at the window's edges, below and above it; the report and the JSON name the
model and the coupling (kappa for phi^4); --first-order on a symmetric double well of ln g
finds the equal-height coupling 0 and the barrier, and fails gracefully without a second
peak. A file in the older Ising layout (int64 energies) still reads, with integer energies.

unittest test cases; arguments after SIM_EXE go to unittest. Under a test runner that imports
the module (python3 -m unittest, pytest), LATTICA_SIM_EXE names sim.
"""

import json
import math
import os
import pathlib
import shutil
import sys
import tempfile
import unittest

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from script_support import (ScratchCase, analysis_env, call_analysis,  # noqa: E402
                            positional_arguments, run, sim_env)

import h5py  # noqa: E402

import synthetic  # noqa: E402

from analysis import multicanonical  # noqa: E402

if __name__ == "__main__":
    [SIM] = positional_arguments(1)
else:  # imported by a test runner, whose own arguments are no sim
    SIM = os.environ.get("LATTICA_SIM_EXE")
TIMEOUT = 200
BETAS = (0.2, 0.44, 0.7)  # reweighting targets of the Ising run
L, V = 4, 16

ISING = """
[lattice]
dims = [4, 4]
[model]
kind = "ising"
beta = 0.44
[multicanonical]
walkers = 64
lnf_initial = 0.5
lnf_final = 1e-3
[run]
thermalization = 100
measurements = 3000
seed = 21
threads = 1
"""

POTTS = """
[lattice]
dims = [8, 8]
[model]
kind = "potts"
q = 10
beta = 1.4260624389053682
[multicanonical]
walkers = 32
sweeps_per_iteration = 20
lnf_initial = 0.5
lnf_final = 1e-3
flatness = 0.7
[run]
thermalization = 100
measurements = 1000
measure_every = 4
seed = 5
threads = 1
"""


def enumerate_ising():
    """Energy and magnetisation of every state of the 4x4 Ising model."""
    codes = np.arange(1 << V, dtype=np.int64)
    s = (1 - 2 * ((codes[:, None] >> np.arange(V)) & 1)).reshape(-1, L, L)
    bonds = np.sum(s * (np.roll(s, -1, axis=1) + np.roll(s, -1, axis=2)), axis=(1, 2))
    return -bonds.astype(float), s.sum(axis=(1, 2)).astype(float)


def exact_canonical(energy, magnetisation, beta):
    x = -beta * energy
    top = x.max()
    w = np.exp(x - top)
    log_z = top + math.log(w.sum())
    w /= w.sum()
    e, m = energy / V, magnetisation / V
    mean_e = np.dot(w, e)
    m2, m4 = np.dot(w, m * m), np.dot(w, m ** 4)
    return {"e": mean_e, "C": beta * beta * V * (np.dot(w, e * e) - mean_e ** 2),
            "U4": 1 - m4 / (3 * m2 * m2), "f": -log_z / (beta * V)}


def simulate_and_analyse(scratch, name, text, *analysis_args):
    source, out = os.path.join(scratch, name + ".toml"), os.path.join(scratch, name + ".h5")
    with open(source, "w") as f:
        f.write(text)
    result = run([SIM, source, "--backend", "cpu", "-o", out, "-q"], TIMEOUT, env=sim_env())
    assert result.returncode == 0, result.stderr
    result = run([sys.executable, "-m", "analysis", "multicanonical", out, *analysis_args,
                  "--json"], TIMEOUT, env=analysis_env(), cwd=scratch)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@unittest.skipIf(SIM is None, "needs SIM_EXE")
class MulticanonicalTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls._scratch = tempfile.TemporaryDirectory(prefix="lattica_muca_")
        cls.ising = simulate_and_analyse(cls._scratch.name, "ising", ISING, "--blocks", "32",
                                         "--beta", *map(str, BETAS))
        cls.potts = simulate_and_analyse(cls._scratch.name, "potts", POTTS, "--first-order")
        cls.window = simulate_and_analyse(
            cls._scratch.name, "window",
            ISING.replace("[run]", 'window = [-1.5, 1.0]\ninitial_weights = "canonical"\n[run]'),
            "--blocks", "32")
        cls.energy, cls.magnetisation = enumerate_ising()

    @classmethod
    def tearDownClass(cls):
        cls._scratch.cleanup()

    def test_log_g_matches_enumeration(self):
        levels, counts = np.unique(self.energy, return_counts=True)
        got = dict(zip(self.ising["energy"], zip(self.ising["log_g"], self.ising["log_g_error"])))
        self.assertEqual(sorted(got), sorted(int(e) for e in levels))
        for e, n in zip(levels, counts):
            value, error = got[int(e)]
            if n == 2:  # the ground states (and the all-antiparallel states) fix the norm
                self.assertAlmostEqual(value, math.log(2), delta=max(5 * error, 1e-9))
                continue
            self.assertGreater(error, 0)
            self.assertLess(abs(value - math.log(n)), 5 * error,
                            f"E = {e}: {value} +- {error}, exact ln {n}")

    def test_a_window_gives_ln_g_relative_to_its_lowest_energy(self):
        levels, counts = np.unique(self.energy, return_counts=True)
        inside = (levels >= -1.5 * V) & (levels <= 1.0 * V)
        exact = np.log(counts[inside]) - math.log(counts[inside][0])
        got = dict(zip(self.window["energy"], zip(self.window["log_g"],
                                                 self.window["log_g_error"])))
        self.assertEqual(sorted(got), sorted(int(e) for e in levels[inside]))
        for e, want in zip(levels[inside], exact):
            value, error = got[int(e)]
            self.assertLess(abs(value - want), 5 * error + 1e-9,
                            f"E = {e}: {value} +- {error}, exact {want}")
        self.assertTrue(all(row["f"] is None for row in self.window["reweight"]))  # NaN

    def test_reweighting_matches_enumeration(self):
        for row in self.ising["reweight"]:
            want = exact_canonical(self.energy, self.magnetisation, row["beta"])
            for name in ("e", "C", "U4", "f"):
                self.assertGreater(row[name + "_error"], 0, name)
                self.assertLess(abs(row[name] - want[name]), 5 * row[name + "_error"],
                                f"beta {row['beta']} {name}: {row[name]} +- "
                                f"{row[name + '_error']}, exact {want[name]}")

    def test_potts_first_order_peaks_have_equal_height(self):
        t = self.potts["first_order"]
        self.assertIsNotNone(t)
        self.assertLess(abs(t["beta"] - math.log(1 + math.sqrt(10))), 0.1)
        self.assertLess(t["e_ordered"], t["e_disordered"])
        self.assertGreater(t["log_peak_ratio"], 0.5)
        self.assertAlmostEqual(t["interface_tension"], t["log_peak_ratio"] / 16)
        self.assertGreaterEqual(t["walkers_in_both_peaks"], 28)  # 8x8: walkers tunnel often
        self.assertGreater(t["tunnelling_events"], 32)  # more than one per walker
        energy = np.array(self.potts["energy"], dtype=float)
        log_p = np.array(self.potts["log_g"]) - t["beta"] * energy
        middle = 32 * (t["e_ordered"] + t["e_disordered"])  # total energy halfway
        ordered, disordered = log_p[energy < middle].max(), log_p[energy > middle].max()
        self.assertAlmostEqual(ordered, disordered, delta=1e-6)
        between = log_p[(energy > 64 * t["e_ordered"]) & (energy < 64 * t["e_disordered"])]
        self.assertAlmostEqual(ordered - between.min(), t["log_peak_ratio"], delta=1e-6)

    def test_a_canonical_run_is_refused(self):
        scratch = self._scratch.name
        source, out = os.path.join(scratch, "plain.toml"), os.path.join(scratch, "plain.h5")
        with open(source, "w") as f:
            f.write('[lattice]\ndims = [4, 4]\n[model]\nkind = "ising"\nbeta = 0.44\n'
                    '[run]\nthermalization = 10\nmeasurements = 10\nseed = 1\n')
        result = run([SIM, source, "--backend", "cpu", "-o", out, "-q"], TIMEOUT, env=sim_env())
        self.assertEqual(result.returncode, 0, result.stderr)
        result = run([sys.executable, "-m", "analysis", "multicanonical", out], TIMEOUT,
                     env=analysis_env(), cwd=scratch)
        self.assertEqual(result.returncode, 2)
        self.assertIn("not a multicanonical run", result.stderr)


# ------------------------------------------------------------------ binned runs, no sim needed

WINDOW_LOW, WIDTH = -20.0, 4.0  # total energy; bins 1 .. 5 cover [-20, 0)
LOG_WEIGHT = np.array([0.3, -0.5, 1.2, 0.0, -1.0])  # ln W of bins 1 .. 5, arbitrary
MEASUREMENTS, WALKERS = 1000, 64
DIMS = (4, 4)  # V = 16


def centres(low, width, count):
    return low + (np.arange(count) + 0.5) * width


def write_binned_run(path, model, *, coupling_value, bin_low, bin_width, log_weight,
                     energy_series, order_series, histogram=None, n=2, dims=DIMS):
    """A run as sim writes one of an O(n) ("on") or phi^4 ("phi4") model in binned energies:
    the root from synthetic.py, then /multicanonical. log_weight: ln W of the window's bins;
    histogram: all bins, 0 and count + 1 included (default: the series' own counts)."""
    count = len(log_weight)
    if model == "on":
        synthetic.write_on_run(path, np.zeros(1), np.zeros((1, n)), beta=coupling_value,
                               dims=dims)
        coupling = "beta"
    else:
        synthetic.write_phi4_run(path, np.zeros(1), kappa=coupling_value, lam=1.0, dims=dims)
        coupling, n = "kappa", 1
    nan = [float("nan")]
    energy = np.concatenate([nan, centres(bin_low, bin_width, count), nan])
    lw = np.concatenate([nan, log_weight, nan])
    energy_series = np.asarray(energy_series, dtype=np.float64)
    if histogram is None:  # the bins as sim's MucaEnergyBins counts them
        e = energy_series.ravel()
        k = np.floor((e - bin_low) / bin_width)
        index = np.where(e < bin_low, 0, np.where(k < count, 1 + k, count + 1)).astype(int)
        histogram = np.bincount(index, minlength=count + 2)
    with h5py.File(path, "a") as f:
        g = f.create_group("multicanonical")
        for name, value in (("model", model), ("initial_weights", "flat"),
                            ("coupling", coupling)):
            g.attrs[name] = value
        integers = {"q": 2, "n": n, "volume": int(np.prod(dims)),
                    "walkers": energy_series.shape[1], "stages": 12, "converged": 1,
                    "sweeps_per_iteration": 10, "wang_landau_sweeps": 5000,
                    "thermalization": 10, "measure_every": 1, "window_first_bin": 1,
                    "window_last_bin": count}
        for name, value in integers.items():
            g.attrs[name] = np.int64(value)
        numbers = {"lnf_initial": 1.0, "lnf_final": 1e-4, "flatness": 0.8,
                   "lnf_reached": 6e-5, "coupling_value": coupling_value, "bin_low": bin_low,
                   "bin_width": bin_width, "histogram_seconds": 0.0, "seconds": 1.0}
        for name, value in numbers.items():
            g.attrs[name] = np.float64(value)
        g.create_dataset("energy", data=energy)
        g.create_dataset("wang_landau_log_g", data=-lw)
        g.create_dataset("visited", data=np.isfinite(lw).astype(np.int32))
        g.create_dataset("log_weight", data=lw)
        g.create_dataset("histogram", data=np.asarray(histogram, dtype=np.int64))
        g.create_dataset("sweep", data=np.arange(1, energy_series.shape[0] + 1, dtype=np.int64))
        g.create_dataset("energy_series", data=energy_series)
        g.create_dataset("order_series", data=np.asarray(order_series, dtype=np.float64))
    return path


def multicanonical_energies(rng, log_weight, low, width, shape):
    """Energies drawn exactly from g(E) W(E) with g flat on the window: a bin with probability
    proportional to W, then E uniform inside it."""
    p = np.exp(log_weight - log_weight.max())
    k = rng.choice(len(log_weight), size=shape, p=p / p.sum())
    return low + (k + rng.random(shape)) * width


def flat_canonical(low, high, coupling):
    """<E> and var(E) of the density exp(-coupling E) on [low, high) (g flat)."""
    length = high - low
    if coupling == 0:
        return 0.5 * (low + high), length * length / 12.0
    x = coupling * length
    mean = low + 1.0 / coupling - length / math.expm1(x)
    var = 1.0 / coupling ** 2 - length * length * math.exp(x) / math.expm1(x) ** 2
    return mean, var


def centre_canonical(low, width, count, coupling):
    """What bin centres instead of the samples' energies would give: <E> over the centres
    weighted by exp(-coupling E_centre)."""
    c = centres(low, width, count)
    w = np.exp(-coupling * (c - c.min()))
    return float(np.dot(w, c) / w.sum())


class BinnedRunTest(ScratchCase):
    prefix = "lattica_muca_binned_"

    def setUp(self):
        super().setUp()
        shape = (MEASUREMENTS, WALKERS)
        energies = multicanonical_energies(self.rng, LOG_WEIGHT, WINDOW_LOW, WIDTH, shape)
        # Two walkers start below and above the window: samples with no weight (ln W NaN).
        energies[0, 0], energies[0, 1] = WINDOW_LOW - 5.0, 3.0
        v = int(np.prod(DIMS))
        # O(2): |M| of a Gaussian vector (U4 = 0 in the O(n) convention, 1/3 in Ising's).
        modulus = np.linalg.norm(self.rng.standard_normal(shape + (2,)), axis=-1) * 0.3 * v
        self.on = write_binned_run(self.path("on.h5"), "on", coupling_value=0.3,
                                   bin_low=WINDOW_LOW, bin_width=WIDTH, log_weight=LOG_WEIGHT,
                                   energy_series=energies, order_series=modulus)
        # phi^4: M = +-c (U4 = 2/3 exactly in the scalar convention).
        sign = np.where(self.rng.random(shape) < 0.5, -1.0, 1.0)
        self.phi4 = write_binned_run(self.path("phi4.h5"), "phi4", coupling_value=0.25,
                                     bin_low=WINDOW_LOW, bin_width=WIDTH,
                                     log_weight=LOG_WEIGHT, energy_series=energies,
                                     order_series=0.7 * v * sign)
        self.volume = v

    def analyse(self, path, *args):
        status, out, err = call_analysis("multicanonical", path, *args)
        self.assertEqual(status, 0, err)
        return out, err

    def test_reading_a_binned_run(self):
        for path, model, coupling, value, n in ((self.on, "on", "beta", 0.3, 2),
                                                 (self.phi4, "phi4", "kappa", 0.25, 1)):
            r = multicanonical.read(path)
            self.assertEqual((r.model, r.coupling, r.beta, r.n), (model, coupling, value, n))
            self.assertTrue(r.binned)
            self.assertTrue(multicanonical.windowed(r))
            self.assertEqual((r.bin_low, r.bin_width), (WINDOW_LOW, WIDTH))
            self.assertEqual(r.energy_series.dtype, np.float64)
            self.assertEqual(r.energy.dtype, np.float64)

    def test_bins_at_the_edges_below_and_above_the_window(self):
        r = multicanonical.read(self.on)
        top = WINDOW_LOW + 5 * WIDTH
        tiny = 1e-9
        cases = {WINDOW_LOW - 1e6: 0, WINDOW_LOW - tiny: 0, WINDOW_LOW: 1,
                 WINDOW_LOW + tiny: 1, WINDOW_LOW + WIDTH - tiny: 1, WINDOW_LOW + WIDTH: 2,
                 -10.0: 3, -6.5: 4, top - tiny: 5, top: 6, top + tiny: 6, 1e6: 6,
                 -math.inf: 0, math.inf: 6, math.nan: 0}
        got = multicanonical._bin_index(r, np.array(list(cases)))
        self.assertEqual(got.tolist(), list(cases.values()))
        self.assertEqual(multicanonical._bin_index(r, np.array([[-19.0, -1.0], [-25.0, 0.5]]))
                         .tolist(), [[1, 5], [0, 6]])
        # The histogram's samples land where the bin centres say.
        c = centres(WINDOW_LOW, WIDTH, 5)
        self.assertEqual(multicanonical._bin_index(r, c).tolist(), [1, 2, 3, 4, 5])
        np.testing.assert_array_equal(r.energy[1:-1], c)

    def test_reweighting_matches_the_closed_form(self):
        for path, coupling in ((self.on, "beta"), (self.phi4, "kappa")):
            out, _ = self.analyse(path, "--beta", "0.3", "0.6", "0.05", "-0.4", "--json")
            doc = json.loads(out)
            self.assertEqual(doc["coupling"], coupling)
            for row in doc["reweight"]:
                k = row["beta"]
                mean, var = flat_canonical(WINDOW_LOW, 0.0, k)
                want = {"e": mean / self.volume, "C": k * k * var / self.volume}
                for name in ("e", "C"):
                    err = row[name + "_error"]
                    self.assertGreater(err, 0, name)
                    self.assertLess(abs(row[name] - want[name]), 5 * err,
                                    f"{coupling} {k} {name}: {row[name]} +- {err}, "
                                    f"exact {want[name]}")
                self.assertIsNone(row["f"])  # binned: ln g only relative
                # The test can tell: bin centres, or exp(+coupling E), would be far off.
                err = row["e_error"]
                if abs(k) >= 0.3:  # near coupling 0 the centres' average is nearly exact
                    wrong = centre_canonical(WINDOW_LOW, WIDTH, 5, k) / self.volume
                    self.assertGreater(abs(wrong - want["e"]), 10 * err, f"{coupling} {k}")
                flipped = flat_canonical(WINDOW_LOW, 0.0, -k)[0] / self.volume
                self.assertGreater(abs(flipped - want["e"]), 10 * err, f"{coupling} {k}")

    def test_reweighting_uses_the_samples_energies_not_the_bin_centres(self):
        r = multicanonical.read(self.on)
        energies = r.energy_series.ravel()
        got = multicanonical._canonical(r, None, energies, r.order_series.ravel(), 0.5)["e"]
        at_centres = multicanonical._canonical(
            r, None, r.energy[multicanonical._bin_index(r, energies)],
            r.order_series.ravel(), 0.5)["e"]
        exact = flat_canonical(WINDOW_LOW, 0.0, 0.5)[0] / self.volume
        self.assertLess(abs(got - exact), 0.01)
        self.assertGreater(abs(at_centres - exact), 0.03)  # w^2/12 coupling per bin, and more

    def test_binder_cumulants_follow_each_models_convention(self):
        rows = multicanonical.reweight(multicanonical.read(self.on), [0.3])
        u4, err = rows[0]["U4"], rows[0]["U4_error"]
        self.assertLess(abs(u4), 5 * err, f"O(2) Gaussian |M|: U4 = {u4} +- {err}")
        self.assertGreater(abs(u4 - 1.0 / 3.0), 10 * err)  # the scalar convention's value
        rows = multicanonical.reweight(multicanonical.read(self.phi4), [0.25])
        self.assertAlmostEqual(rows[0]["U4"], 2.0 / 3.0, places=12)

    def test_log_g_is_flat_relative_to_the_lowest_bin(self):
        r = multicanonical.read(self.on)
        lng, err = multicanonical.log_g(r)
        self.assertTrue(np.isnan(lng[0]) and np.isnan(lng[-1]))
        self.assertEqual(lng[1], 0.0)
        for k in range(2, 6):
            self.assertGreater(err[k], 0)
            self.assertLess(abs(lng[k]), 5 * err[k], f"bin {k}: {lng[k]} +- {err[k]}")

    def test_report_and_json_name_the_model_and_the_coupling(self):
        out, _ = self.analyse(self.on)
        self.assertIn("multicanonical O(2)", out)
        self.assertIn("beta = 0.3:", out)
        self.assertNotIn("kappa", out)
        for c in centres(WINDOW_LOW, WIDTH, 5):
            self.assertIn(f"E = {c:14.6f}", out)
        out, _ = self.analyse(self.phi4)
        self.assertIn("multicanonical phi^4", out)
        self.assertIn("kappa = 0.25:", out)
        self.assertNotIn("beta", out)
        for path, model, coupling, value in ((self.on, "on", "beta", 0.3),
                                             (self.phi4, "phi4", "kappa", 0.25)):
            doc = json.loads(self.analyse(path, "--json")[0])
            self.assertEqual((doc["model"], doc["coupling"], doc["coupling_value"]),
                             (model, coupling, value))
            self.assertTrue(doc["binned"])
            self.assertEqual((doc["bin_low"], doc["bin_width"]), (WINDOW_LOW, WIDTH))
            self.assertEqual(doc["energy"], centres(WINDOW_LOW, WIDTH, 5).tolist())
            self.assertEqual(len(doc["log_g"]), 5)
            self.assertEqual([row["beta"] for row in doc["reweight"]], [value])
        self.assertEqual(json.loads(self.analyse(self.on, "--json")[0])["n"], 2)

    def test_report_and_json_show_the_refinement(self):
        out, _ = self.analyse(self.on)
        self.assertNotIn("refinement", out)  # none ran (and files before it have no attribute)
        self.assertEqual(json.loads(self.analyse(self.on, "--json")[0])["refine_iterations"], 0)
        path = self.path("refined.h5")
        shutil.copy(self.on, path)
        with h5py.File(path, "a") as f:
            f["multicanonical"].attrs["refine_iterations"] = np.int64(5)
            f["multicanonical"].attrs["refine_sweeps"] = np.int64(2000)
        out, _ = self.analyse(path)
        self.assertIn("refinement: 5 iterations of 2000 sweeps per walker", out)
        doc = json.loads(self.analyse(path, "--json")[0])
        self.assertEqual((doc["refine_iterations"], doc["refine_sweeps"]), (5, 2000))

    def test_first_order_without_a_second_peak_fails_gracefully(self):
        out, err = self.analyse(self.phi4, "--first-order", "--json")
        self.assertIn("no second peak near kappa", err)
        self.assertIsNone(json.loads(out)["first_order"])

    def test_first_order_on_a_double_well(self):
        # ln g(E) = -h ((E - mid)^2 / a^2 - 1)^2 on 41 bins of width 1 centred on -40 .. 0:
        # at coupling 0 P(E) = g(E) has equal peaks at mid -+ a, the barrier h between.
        h, mid, a = 3.0, -20.0, 10.0
        low, count = -40.5, 41
        c = centres(low, 1.0, count)
        true_lng = -h * ((c - mid) ** 2 / a ** 2 - 1.0) ** 2
        energies = low + self.rng.random((400, 32)) * count  # flat: W = 1 / g exactly
        histogram = np.concatenate([[0], np.full(count, 1000), [0]])
        path = write_binned_run(self.path("well.h5"), "phi4", coupling_value=0.01,
                                bin_low=low, bin_width=1.0, log_weight=-true_lng,
                                energy_series=energies, order_series=np.ones_like(energies),
                                histogram=histogram)
        out, _ = self.analyse(path, "--first-order", "--json")
        t = json.loads(out)["first_order"]
        self.assertIsNotNone(t)
        self.assertAlmostEqual(t["beta"], 0.0, delta=1e-8)
        self.assertAlmostEqual(t["log_peak_ratio"], h, delta=1e-6)
        self.assertAlmostEqual(t["interface_tension"], h / (2 * 4))
        self.assertAlmostEqual(t["e_ordered"], (mid - a) / self.volume, delta=0.5 / self.volume)
        self.assertAlmostEqual(t["e_disordered"], (mid + a) / self.volume,
                               delta=0.5 / self.volume)
        self.assertIn("beta_error", t)
        self.assertGreater(t["tunnelling_events"], 0)
        report, _ = self.analyse(path, "--first-order")
        self.assertIn("equal-height P(E): kappa = ", report)


class LegacyLayoutTest(ScratchCase):
    """A file as sim wrote Ising runs before the continuous models: int64 energies, int32
    series, no n, coupling or bins."""
    prefix = "lattica_muca_legacy_"

    def test_an_integer_energy_file_still_reads(self):
        path = self.path("ising.h5")
        synthetic.write_run(path, np.zeros(1), np.zeros(1), beta=0.44, dims=(2, 2))
        energy = 8 - 2 * np.arange(9, dtype=np.int64)  # bin k: k satisfied bonds of 8
        series = self.rng.choice([-8, -4, 0, 4, 8], size=(50, 8)).astype(np.int32)
        with h5py.File(path, "a") as f:
            g = f.create_group("multicanonical")
            g.attrs["model"] = "ising"
            for name, value in (("q", 2), ("walkers", 8), ("stages", 3), ("converged", 1),
                                ("wang_landau_sweeps", 100), ("measure_every", 1),
                                ("window_first_bin", 0), ("window_last_bin", 8)):
                g.attrs[name] = np.int64(value)
            g.attrs["lnf_reached"] = 1e-3
            g.create_dataset("energy", data=energy)
            g.create_dataset("log_weight", data=np.zeros(9))
            hist = np.bincount(np.searchsorted(-energy, -series.ravel()), minlength=9)
            g.create_dataset("histogram", data=hist.astype(np.int64))
            g.create_dataset("visited", data=(hist > 0).astype(np.int32))
            g.create_dataset("energy_series", data=series)
            g.create_dataset("order_series", data=np.ones((50, 8), dtype=np.int32))
        r = multicanonical.read(path)
        self.assertFalse(r.binned)
        self.assertEqual((r.coupling, r.beta, r.n), ("beta", 0.44, 1))
        np.testing.assert_array_equal(multicanonical._bin_index(r, [8, 6, -8]), [0, 1, 8])
        status, out, err = call_analysis("multicanonical", path, "--json")
        self.assertEqual(status, 0, err)
        doc = json.loads(out)
        self.assertEqual(doc["energy"], [8, 4, 0, -4, -8])
        self.assertTrue(all(isinstance(e, int) for e in doc["energy"]))
        self.assertEqual(doc["coupling"], "beta")
        lng = np.array(doc["log_g"])
        self.assertAlmostEqual(lng[-1], math.log(2))  # the ground state fixes the norm
        status, out, err = call_analysis("multicanonical", path)
        self.assertEqual(status, 0, err)
        self.assertIn("multicanonical ising, L = 2x2", out)
        self.assertIn("    E =       -8  ln g =", out)
        self.assertIn("    beta = 0.44: e = ", out)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]] + sys.argv[1:])

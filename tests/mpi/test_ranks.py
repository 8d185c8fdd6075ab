#!/usr/bin/env python3
"""The decomposed chain is the chain (issue 8): runs `sim` on 1, 2 and 4 MPI ranks with several
grids and models and expects the same observables, histograms, snapshots and final
configuration, bit for bit for discrete models (continuous: the configurations bit for bit, the
observables to rounding, since their sums are added in another order); a checkpoint written on 2
ranks resumes on 4 and on 1; per-rank checkpoints (issue 22) written on 1, 2 and 4 ranks resume
on 1, 2 and 4, and a missing part is refused; bad grids exit 2 naming parallel.grid. The
spectra and the Langevin/MALA moves of decomposed runs go through the distributed FFT (issue
22), in host memory on CPU ranks and in device memory on GPU ranks: spectra, and the fields of
those moves, agree to rounding.
Snapshots (issue 22) are the single process's frames, bytes and bit-packed, whether every rank
writes its box (parallel HDF5) or rank 0 writes them a box at a time (sim's
LATTICA_SNAPSHOT_WRITES=rank0); LATTICA_EXPECT_SNAPSHOT_WRITES=collective (set by ctest where the
build has parallel HDF5) requires the first where sim is not told otherwise, rank0 the second.

With BACKEND cuda every rank takes its own GPU: layouts with more ranks than GPUs are skipped
(exit 77 when fewer than 2 GPUs leave nothing to run, a failure instead with SIM_REQUIRE_GPU=1),
and the references of discrete models are the CPU's single-process chains, so GPU boxes are
checked against the CPU.

Usage: test_ranks.py SIM MPIRUN BACKEND WORKDIR [CASE...] [unittest options]. BACKEND is cpu or
cuda; a CASE (a name in CASES, resume or bad_grid) runs that test only."""
import json
import math
import os
import subprocess
import sys
import unittest

import h5py

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import same_chain  # noqa: E402

# The leading arguments that are not options; the rest go to unittest.
POSITIONAL = []
while len(sys.argv) > 1 and not sys.argv[1].startswith("-"):
    POSITIONAL.append(sys.argv.pop(1))
if len(POSITIONAL) < 4:
    print(__doc__, file=sys.stderr)
    sys.exit(2)
SIM, MPIRUN, BACKEND, WORK = POSITIONAL[:4]
ONLY = POSITIONAL[4:]
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1", OMP_NUM_THREADS="1", NCCL_NVLS_ENABLE="0")


def gpu_count():
    try:
        listing = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout
    except OSError:
        return 0
    return sum(1 for line in listing.splitlines() if line.startswith("GPU "))


GPUS = gpu_count() if BACKEND == "cuda" else 1 << 20


def toml(dims, model, extra="", thermalization=12):
    return f"""
[lattice]
dims = {dims}
[model]
{model}
[run]
thermalization = {thermalization}
measurements = 16
measure_every = 2
seed = 2026
backend = "{BACKEND}"
{extra}
[output]
snapshot_every = 8
"""


# name: (dims, model lines, extra [run] lines, [(ranks, grid or None)], rtol)
CASES = {
    "ising3d_packed": ("[8, 8, 64]", 'kind = "ising"\nbeta = 0.22', "",
                       [(2, None), (2, [1, 2, 1]), (4, [2, 2, 1]), (4, [4, 1, 1])], 0),
    "ising2d_bytes": ("[16, 20]", 'kind = "ising"\nbeta = 0.44', "replicas = 2",
                      [(2, None), (4, [4, 1])], 0),
    "ising4d_packed_bits": ("[4, 4, 4, 64]", 'kind = "ising"\nbeta = 0.15', "",
                            [(2, [1, 2, 1, 1]), (4, [2, 1, 2, 1])], 0),
    "potts3d_heatbath": ("[8, 4, 6]", 'kind = "potts"\nq = 3\nbeta = 0.5', "",
                         [(2, None), (4, [2, 2, 1])], 0),
    "phi4_3d": ("[8, 8, 8]", 'kind = "phi4"\nkappa = 0.18\nlambda = 1.1\nprecision = "double"',
                "", [(2, None), (4, [2, 2, 1])], 1e-12),
    # Spectra through the distributed FFT (issue 22): the single process's to rounding, on grids
    # split along one or two axes, and with more ranks than rows of axis 0 ([1, 4, 1]).
    "ising3d_spectral": ("[8, 8, 64]", 'kind = "ising"\nbeta = 0.22', "",
                         [(2, None), (4, [2, 2, 1])], 0),
    "phi4_2d_spectral": ("[8, 16]", 'kind = "phi4"\nkappa = 0.2\nlambda = 1.0\nprecision = "float"',
                         "", [(2, None), (4, [4, 1])], 1e-5),
    # measure.structure_factor_tables = "radial": only the summaries, rank 0 alone writes them.
    "phi4_2d_spectral_radial": ("[8, 16]",
                                'kind = "phi4"\nkappa = 0.2\nlambda = 1.0\nprecision = "float"',
                                "", [(2, None), (4, [4, 1])], 1e-5),
    "phi4_3d_spectral": ("[2, 8, 12]",
                         'kind = "phi4"\nkappa = 0.18\nlambda = 1.1\nprecision = "double"',
                         "replicas = 2", [(2, [1, 2, 1]), (4, [1, 4, 1])], 1e-12),
    "o3_2d": ("[8, 12]", 'kind = "on"\nn = 3\nbeta = 0.7\nprecision = "float"', "",
              [(2, None), (4, [4, 1])], 1e-5),
    # Cluster moves (issue 19): clusters cross the boxes, whose labels the ranks merge.
    "ising2d_clusters": ("[16, 20]", 'kind = "ising"\nbeta = 0.44', "replicas = 2",
                         [(2, None), (4, [4, 1])], 0),
    "ising3d_packed_sw_field": ("[8, 8, 64]", 'kind = "ising"\nbeta = 0.23\nh = 0.05', "",
                                [(2, None), (4, [2, 2, 1]), (4, [4, 1, 1])], 0),
    "ising3d_packed_sw": ("[8, 8, 64]", 'kind = "ising"\nbeta = 0.2216', "",
                          [(2, [1, 2, 1]), (4, [2, 2, 1])], 0),
    "potts3d_wolff_field": ("[8, 4, 6]", 'kind = "potts"\nq = 3\nbeta = 1.0\nh = 0.1', "",
                            [(2, None), (4, [2, 2, 1])], 0),
    "phi4_3d_clusters": ("[8, 8, 8]",
                         'kind = "phi4"\nkappa = 0.19\nlambda = 1.1\nh = 0.02\nprecision = "double"',
                         "", [(2, None), (4, [2, 2, 1])], 1e-12),
    "o3_3d_clusters": ("[8, 4, 8]", 'kind = "on"\nn = 3\nbeta = 0.7\nprecision = "double"', "",
                       [(2, None), (4, [2, 2, 1])], 1e-12),
    # Fourier-accelerated Langevin and MALA through the distributed FFT (issue 22): the fields
    # too are the single process's to rounding; [1, 4, 1] has more ranks than rows of axis 0.
    "phi4_3d_mala": ("[4, 8, 12]",
                     'kind = "phi4"\nkappa = 0.18\nlambda = 0.5\nprecision = "double"',
                     "", [(2, None), (4, [2, 2, 1])], 1e-10),
    "phi4_3d_langevin": ("[2, 8, 12]",
                         'kind = "phi4"\nkappa = 0.18\nlambda = 0.5\nprecision = "double"',
                         "replicas = 2", [(2, [1, 2, 1]), (4, [1, 4, 1])], 1e-10),
    # Parallel tempering (issue 21): exchanges decided from sums added over the ranks.
    "ising2d_tempering": ("[16, 20]", 'kind = "ising"', "replicas = 2",
                          [(2, None), (4, [4, 1])], 0),
    # The feedback-optimised ladder: every rank moves it alike, from the shared visit counts.
    "ising2d_feedback": ("[8, 10]", 'kind = "ising"', "", [(2, None)], 0),
}
# Cases whose thermalization is not the default 12 sweeps.
THERMALIZATION = {"ising2d_feedback": 66}
# Appended to a case's input, whose last section is [output].
SPECTRAL = "[measure]\nstructure_factor = true\nstructure_factor_every = 2\ntimeslice = true\n"
# The spectra's tolerance, relative to their largest value.
SPECTRAL_RTOL = 1e-12
# Cases whose moves go through the distributed FFT: their snapshots agree to the case's rtol.
WHOLE_LATTICE = ("phi4_3d_mala", "phi4_3d_langevin")
EXTRA_INPUT = {"ising3d_spectral": SPECTRAL,
               "phi4_2d_spectral": SPECTRAL,
               "phi4_2d_spectral_radial": SPECTRAL + 'structure_factor_tables = "radial"\n',
               "phi4_3d_spectral": SPECTRAL,
               "phi4_3d_mala": '[update]\nsequence = ["mala", "overrelaxation"]\n'
                               'langevin_step = 0.12\ntune = false\n',  # accepts most
               "phi4_3d_langevin": '[update]\nsequence = ["langevin", "mala"]\n'
                                   'langevin_step = 0.1\n' + SPECTRAL,
               "ising4d_packed_bits": 'snapshot_packing = "bits"\n',
               "potts3d_heatbath": '[update]\nalgorithm = "heatbath"\n',
               "ising2d_clusters":
                   '[update]\nsequence = ["metropolis", "swendsen_wang", "wolff"]\n'
                   'wolff_clusters = 3\n',
               "ising3d_packed_sw_field": '[update]\nsequence = ["swendsen_wang"]\n',
               "ising3d_packed_sw": '[update]\nsequence = ["metropolis", "swendsen_wang"]\n',
               "potts3d_wolff_field": '[update]\nsequence = ["heatbath", "wolff"]\n'
                                      'wolff_clusters = 4\n',
               "phi4_3d_clusters": '[update]\nsequence = ["metropolis", "swendsen_wang", "wolff"]\n',
               "o3_3d_clusters": '[update]\nsequence = ["overrelaxation", "wolff", "swendsen_wang"]\n',
               # Metropolis last: the single process's rounds take the sums of its fused pass,
               # the ranks' their host rounds from sums added over the boxes.
               "ising2d_tempering": '[update]\nsequence = ["swendsen_wang", "metropolis"]\n'
                                    '[tempering]\nbeta = [0.38, 0.42, 0.46]\nh = [0.0, 0.02, 0.05]\n'
                                    'exchange_every = 2\n',
               "ising2d_feedback": '[tempering]\nbeta = [0.3, 0.33, 0.36, 0.42]\nfeedback = 2\n'}


def write_input(name, text):
    path = os.path.join(WORK, name + ".toml")
    with open(path, "w") as f:
        f.write(text)
    return path


class RanksTest(unittest.TestCase):
    """One test per case of CASES (test_<name>), test_resume and test_bad_grid; layouts that
    need more GPUs than there are are skipped subtests."""

    @classmethod
    def setUpClass(cls):
        os.makedirs(WORK, exist_ok=True)

    def sim(self, ranks, args, expect=0, env=None):
        """Runs sim on ranks MPI ranks (0: without mpirun) and asserts its exit status."""
        command = [SIM] + args if ranks == 0 else [MPIRUN, "-n", str(ranks), SIM] + args
        r = subprocess.run(command, env=dict(ENV, **(env or {})), capture_output=True, text=True)
        self.assertEqual(r.returncode, expect, f"{' '.join(command)}\n{r.stderr}")
        return r

    def assert_same_chain(self, a, b, rtol, spectral_rtol=0.0, field_rtol=0.0):
        compared, problems = same_chain.differences(a, b, rtol, spectral_rtol, field_rtol)
        self.assertEqual(problems, [], f"{a} vs {b}")
        print(f"same_chain: {a} and {b}: {compared} datasets agree")

    def check_chain(self, name):
        dims, model, extra, layouts, rtol = CASES[name]
        path = write_input(name, toml(dims, model, extra, THERMALIZATION.get(name, 12)) +
                           EXTRA_INPUT.get(name, ""))
        reference = os.path.join(WORK, f"{name}.1.h5")
        # Discrete chains are the CPU's on every backend; continuous ones, and spectra (cuFFT
        # against FFTW), round differently there.
        same_backend = rtol > 0 or "spectral" in name
        self.sim(0, [path, "-o", reference, "--force", "-q"] +
                 ([] if same_backend else ["--backend", "cpu"]))
        for ranks, grid in layouts:
            with self.subTest(ranks=ranks, grid=grid):
                if ranks > GPUS:
                    self.skipTest(f"{name} on {ranks} ranks: {GPUS} GPU(s)")
                label = "auto" if grid is None else "x".join(map(str, grid))
                out = os.path.join(WORK, f"{name}.{ranks}.{label}.h5")
                args = [path, "-o", out, "--force", "-q"]
                if grid is not None:
                    args += ["--set", f"parallel.grid={grid}"]
                self.sim(ranks, args)
                self.assert_same_chain(reference, out, rtol, SPECTRAL_RTOL,
                                       rtol if name in WHOLE_LATTICE else 0.0)

    def test_resume(self):
        """A checkpoint from 2 ranks resumes on 4 ranks, and on 1, as the straight run."""
        dims, model, _, _, _ = CASES["ising3d_packed"]
        base = toml(dims, model, "checkpoint_every = 10")
        path = write_input("resume", base)
        straight = os.path.join(WORK, "resume.straight.h5")
        self.sim(0, [path, "-o", straight, "--force", "-q"])
        for later in (4, 0):
            with self.subTest(resume_ranks=later or 1):
                if max(later, 2) > GPUS:
                    self.skipTest(f"resume on {later} ranks: {GPUS} GPU(s)")
                out = os.path.join(WORK, f"resume.2to{later or 1}.h5")
                short = write_input("resume.short",
                                    base.replace("measurements = 16", "measurements = 4"))
                self.sim(2, [short, "-o", out, "--force", "-q"])
                self.sim(later, [path, "-o", out, "--resume", "-q"])
                self.assert_same_chain(straight, out, 0)

    def resume_matrix(self, name, model, dims, extra, rtol, pairs, sections="", field_rtol=0.0):
        """Checkpoints written on `first` ranks resume on `later` ranks (0: one process) as the
        straight run, for each (first, later) of pairs; `sections` are appended to the input."""
        base = toml(dims, model, extra + "\ncheckpoint_every = 10") + sections
        path = write_input(name, base)
        short = write_input(name + ".short", base.replace("measurements = 16", "measurements = 4"))
        straight = os.path.join(WORK, f"{name}.straight.h5")
        self.sim(0, [path, "-o", straight, "--force", "-q"])
        for first, later in pairs:
            with self.subTest(first=first or 1, later=later or 1):
                if max(first, later) > GPUS:
                    self.skipTest(f"{first} or {later} ranks: {GPUS} GPU(s)")
                out = os.path.join(WORK, f"{name}.{first or 1}to{later or 1}.h5")
                self.sim(first, [short, "-o", out, "--force", "-q"])
                parts = out + ".checkpoint.parts"
                if first > 1:  # one generation of parts, one file per rank
                    generations = os.listdir(parts)
                    self.assertEqual(len(generations), 1, generations)
                    self.assertEqual(sorted(os.listdir(os.path.join(parts, generations[0]))),
                                     sorted(f"part-{r}.h5" for r in range(first)))
                    if "structure_factor" in sections:  # each part its rows of the sums
                        self.assert_spectrum_rows(os.path.join(parts, generations[0]), first,
                                                  dims)
                else:
                    self.assertFalse(os.path.exists(parts))
                self.sim(later, [path, "-o", out, "--resume", "-q"])
                self.assert_same_chain(straight, out, rtol, SPECTRAL_RTOL, field_rtol)

    def assert_spectrum_rows(self, folder, ranks, dims):
        """The parts hold the structure factor's running sums by rows of axis 0, together the
        whole half spectrum, each no more than its rank's rows (SlabFft's split)."""
        extents = [int(n) for n in dims.strip("[]").split(",")]
        row_modes = math.prod(extents[1:-1]) * (extents[-1] // 2 + 1)
        sizes = []
        for r in range(ranks):
            with h5py.File(os.path.join(folder, f"part-{r}.h5"), "r") as f:
                sizes.append(f["structure_factor_power_sum"].size)
                self.assertEqual(f["structure_factor_power_squares"].size, sizes[-1])
        rows = [extents[0] // ranks + (r < extents[0] % ranks) for r in range(ranks)]
        self.assertEqual(sizes, [n * row_modes for n in rows])

    def test_resume_per_rank_parts(self):
        """Issue 22: checkpoints written on 1, 2 and 4 ranks (each rank its box) resume on 1, 2
        and 4 ranks, bit for bit (Ising, two replicas); 1 to 1 is tests/cli's single file."""
        pairs = [(first, later) for first in (0, 2, 4) for later in (0, 2, 4) if first or later]
        self.resume_matrix("resume_parts", 'kind = "ising"\nbeta = 0.44', "[16, 20]",
                           "replicas = 2", 0, pairs)

    def test_resume_per_rank_parts_continuous(self):
        """Issue 22: a continuous model's parts resume on other rank counts, to rounding."""
        dims, model, _, _, rtol = CASES["phi4_3d"]
        self.resume_matrix("resume_parts_phi4", model, dims, "", rtol, [(2, 4), (4, 0), (0, 2)])

    def test_resume_spectral_mala(self):
        """Issue 22: the structure factor's sums (each rank its rows of the spectrum) and the
        Langevin kernel's shift of a checkpoint continue on other rank counts, to rounding."""
        dims, model, _, _, rtol = CASES["phi4_3d_mala"]
        self.resume_matrix("resume_spectral_mala", model, dims, "", rtol, [(2, 4), (4, 0), (0, 2)],
                           EXTRA_INPUT["phi4_3d_mala"] + SPECTRAL, rtol)

    def test_resume_missing_part(self):
        """A manifest whose part is gone: exit 2 on every rank, naming the checkpoint."""
        dims, model, _, _, _ = CASES["ising2d_bytes"]
        base = toml(dims, model, "checkpoint_every = 10")
        path = write_input("missing_part", base)
        short = write_input("missing_part.short",
                            base.replace("measurements = 16", "measurements = 4"))
        out = os.path.join(WORK, "missing_part.h5")
        if GPUS < 2:
            self.skipTest("fewer than 2 GPUs")
        self.sim(2, [short, "-o", out, "--force", "-q"])
        parts = out + ".checkpoint.parts"
        generation = os.path.join(parts, os.listdir(parts)[0])
        os.remove(os.path.join(generation, "part-1.h5"))
        before = os.path.getmtime(out)
        r = self.sim(2, [path, "-o", out, "--resume", "-q"], expect=2)
        self.assertIn(out + ".checkpoint", r.stderr)
        self.assertIn("part", r.stderr)
        self.assertEqual(before, os.path.getmtime(out), "a refused resume touched the output")

    def test_collective_snapshots(self):
        """Issue 22: several frames and the final configuration, bytes and bit-packed, on 2 and
        4 ranks: the single process's datasets, dtypes and committed lengths, written the way
        the build says (LATTICA_SNAPSHOT_WRITES)."""
        expected = os.environ.get("LATTICA_EXPECT_SNAPSHOT_WRITES", "")
        dims, model = "[8, 4, 32]", 'kind = "ising"\nbeta = 0.22'
        for packing in ("bytes", "bits"):
            path = write_input(f"frames_{packing}", toml(dims, model, "replicas = 2").replace(
                "snapshot_every = 8", f'snapshot_every = 6\nsnapshot_packing = "{packing}"'))
            reference = os.path.join(WORK, f"frames_{packing}.1.h5")
            self.sim(0, [path, "-o", reference, "--force", "-q", "--backend", "cpu"])
            # The last through rank 0 whatever the build, so that both ways stay tested.
            for ranks, grid, writes in ((2, None, ""), (4, [2, 2, 1], ""), (2, None, "rank0")):
                with self.subTest(packing=packing, ranks=ranks, writes=writes):
                    if ranks > GPUS:
                        self.skipTest(f"{ranks} ranks: {GPUS} GPU(s)")
                    out = os.path.join(WORK, f"frames_{packing}.{ranks}{writes}.h5")
                    args = [path, "-o", out, "--force"]
                    if grid is not None:
                        args += ["--set", f"parallel.grid={grid}"]
                    r = self.sim(ranks, args, env={"LATTICA_SNAPSHOT_WRITES": writes})
                    collective = "snapshots written collectively" in r.stderr
                    if writes == "rank0" or expected == "rank0":
                        self.assertFalse(collective, r.stderr)
                    elif expected == "collective":
                        self.assertTrue(collective, f"not written collectively:\n{r.stderr}")
                    self.assert_same_chain(reference, out, 0)
                    with h5py.File(reference, "r") as a, h5py.File(out, "r") as b:
                        sa, sb = a["snapshots"], b["snapshots"]
                        self.assertGreater(sa["configuration"].shape[0], 2)  # several frames
                        self.assertEqual(sa["sweep"][-1], 44)  # the final one, off the period
                        self.assertEqual(sa["configuration"].dtype, sb["configuration"].dtype)
                        self.assertEqual(sa.attrs["committed_length"],
                                         sb.attrs["committed_length"])
                        self.assertEqual(sa["configuration"].attrs["packing"],
                                         sb["configuration"].attrs["packing"])

    def test_bench_scaling_steps(self):
        """Issue 22: sim bench --scaling times a structure-factor measurement (the distributed
        FFT) and a snapshot frame written to HDF5 (collectively where the build can) on 1 and
        2 ranks, stacking a box per rank, says so in its JSON and leaves no file behind."""
        if GPUS < 2:
            self.skipTest("fewer than 2 GPUs")
        for kernel, model, key in (("structure factor", "phi4", "seconds_per_spectrum"),
                                   ("snapshot", "ising", "seconds_per_frame")):
            with self.subTest(kernel=kernel):
                out = os.path.join(WORK, "bench_scaling.json")
                r = self.sim(2, ["bench", "--scaling", "weak", "--backend", BACKEND, "--model",
                                 model, "--kernel", kernel, "--dims", "4", "8", "8",
                                 "--repeats", "1", "--json", out])
                self.assertIn(kernel, r.stdout)
                with open(out) as f:
                    report = json.load(f)
                self.assertEqual(report["kernel"], kernel)
                self.assertEqual([p["ranks"] for p in report["points"]], [1, 2])
                self.assertEqual([p["lattice"] for p in report["points"]], ["4x8x8", "8x8x8"])
                self.assertTrue(all(p[key] > 0 for p in report["points"]))
                self.assertFalse(os.path.exists("sim_bench_snapshots.h5"))

    def test_bad_grid(self):
        dims, model, _, _, _ = CASES["ising3d_packed"]
        path = write_input("bad", toml(dims, model))
        out = os.path.join(WORK, "bad.h5")
        if GPUS < 2:
            self.skipTest("bad grids: fewer than 2 GPUs")
        for grid, why in (([2, 1, 2], "last axis"), ([3, 1, 1], "boxes but the run has"),
                          ([2, 2, 1], "boxes but the run has")):
            with self.subTest(grid=grid):
                if os.path.exists(out):
                    os.remove(out)
                r = self.sim(2, [path, "-o", out, "--set", f"parallel.grid={grid}"], expect=2)
                self.assertIn("parallel.grid", r.stderr, "the error names parallel.grid")
                self.assertIn(why, r.stderr, "the error gives the reason")
                self.assertFalse(os.path.exists(out), f"a refused run wrote {out}")


def chain_test(name):
    def test(self):
        self.check_chain(name)
    test.__doc__ = f"{name}: the single process's chain on every layout of ranks and grid"
    return test


for _name in CASES:
    setattr(RanksTest, f"test_{_name}", chain_test(_name))


def main():
    if BACKEND == "cuda" and GPUS < 2:  # the decomposed GPU chains need a GPU per rank
        if os.environ.get("SIM_REQUIRE_GPU") == "1":
            print(f"test_ranks: SIM_REQUIRE_GPU=1 but {GPUS} GPU(s); 2 or more needed",
                  file=sys.stderr)
            return 1
        print(f"test_ranks (cuda): skipped, {GPUS} GPU(s)")
        return 77  # ctest's SKIP_RETURN_CODE for mpi_ranks_gpu
    names = [f"RanksTest.test_{case}" for case in ONLY]
    result = unittest.main(argv=sys.argv + names, exit=False, verbosity=2).result
    failed = len(result.failures) + len(result.errors)
    sys.stderr.flush()
    print(f"test_ranks ({BACKEND}, {GPUS if BACKEND == 'cuda' else 'no'} GPUs): "
          f"{failed} failure(s), {len(result.skipped)} skipped", flush=True)
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())

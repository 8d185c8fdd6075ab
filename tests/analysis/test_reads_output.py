#!/usr/bin/python3
"""The analysis package reads what sim writes.

    test_reads_output.py SIM_EXE INPUT_TOML

Runs sim on INPUT_TOML made small (CPU backend, 16x16, a few sweeps) into a temporary
directory, loads the file with analysis.lattica_file and checks lengths, dtypes, metadata,
truncation to committed_length and the schema check, and that bit-packed snapshots
(output.snapshot_packing = "bits") read back as the same frames; then runs
`python3 -m analysis info`.
unittest test cases; arguments after SIM_EXE INPUT_TOML go to unittest (-v, -k PATTERN).
"""

import os
import pathlib
import shutil
import sys
import tempfile
import unittest

import h5py
import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from script_support import (analysis_env, positional_arguments, run,  # noqa: E402
                            sim_command, sim_env)

from analysis import lattica_file  # noqa: E402

THERMALIZATION, MEASUREMENTS, MEASURE_EVERY, SNAPSHOT_EVERY, SEED = 10, 25, 2, 20, 31337
TOTAL = THERMALIZATION + MEASUREMENTS * MEASURE_EVERY
TIMEOUT = 120  # seconds, each command; stdout and stderr come together
SIM, INPUT_PATH = positional_arguments(2, __doc__)


def energy_magnetization(frame):
    """Per-site energy (h = 0) and magnetization of a periodic 2D frame."""
    s = frame.astype(np.int64)
    bonds = np.sum(s * (np.roll(s, -1, axis=0) + np.roll(s, -1, axis=1)))
    return -float(bonds) / s.size, float(np.sum(s)) / s.size


class SimOutputTest(unittest.TestCase):
    """sim runs once with byte snapshots and once bit-packed (the same chain); the tests read
    the two files."""

    @classmethod
    def setUpClass(cls):
        with open(INPUT_PATH, encoding="utf-8") as f:
            cls.input_toml = f.read()
        cls._scratch = tempfile.TemporaryDirectory(prefix="lattica_analysis_")
        cls.scratch = cls._scratch.name
        cls.results = {}
        for packing in ("bytes", "bits"):
            out = os.path.join(cls.scratch, f"{packing}.h5")
            settings = ["lattice.dims=[16,16]", f"run.thermalization={THERMALIZATION}",
                        f"run.measurements={MEASUREMENTS}", f"run.measure_every={MEASURE_EVERY}",
                        f"output.snapshot_every={SNAPSHOT_EVERY}"]
            if packing == "bits":
                settings.append("output.snapshot_packing=bits")
            cls.results[packing] = (out, run(sim_command(SIM, INPUT_PATH, out, SEED, *settings,
                                                         quiet=packing != "bits"),
                                             TIMEOUT, merge_stderr=True,
                                             env=sim_env(override=False)))

    @classmethod
    def tearDownClass(cls):
        cls._scratch.cleanup()

    def output(self, packing):
        """The path of sim's file with packing ("bytes" or "bits"), which sim must have written."""
        out, result = self.results[packing]
        self.assertEqual(result.returncode, 0,
                         f"sim ({packing}) exited with {result.returncode}:\n{result.stdout}")
        return out

    def check_file(self, path):
        run_ = lattica_file.load(path)
        a = run_.attrs
        self.assertEqual(a["schema"], "lattica/1")
        self.assertEqual(a["backend"], "cpu")
        self.assertEqual(a["model"], "ising")
        self.assertEqual(a["seed"], SEED)
        self.assertEqual(a["h"], 0.0)
        self.assertIsInstance(a["beta"], float)
        self.assertEqual(a["input_toml"], self.input_toml, "input_toml differs from the input file")
        self.assertEqual(run_.dims, (16, 16))
        for key in ("program_version", "git_commit", "created_utc", "device", "resolved_config"):
            self.assertIsInstance(a.get(key), str, f"attribute {key} missing or not a string")
            self.assertTrue(a[key], f"attribute {key} empty")

        self.assertEqual(sorted(run_.observables), ["energy", "magnetization"])
        for name, series in run_.observables.items():
            self.assertEqual(series.dtype, np.float64, name)
            self.assertEqual(series.shape, (MEASUREMENTS,), name)
        expected_sweeps = THERMALIZATION + MEASURE_EVERY * np.arange(1, MEASUREMENTS + 1)
        self.assertEqual(run_.sweep.dtype, np.int64)
        self.assertTrue(np.array_equal(run_.sweep, expected_sweeps), f"sweeps {run_.sweep}")
        self.assertEqual(len(run_), MEASUREMENTS)

        s = run_.snapshots
        self.assertGreaterEqual(s.count, 1)
        self.assertEqual(s.shape, (s.count, 16, 16))
        self.assertEqual(s.sweep.dtype, np.int64)
        self.assertEqual(len(s.sweep), s.count, f"snapshot sweeps {s.sweep}")
        self.assertEqual(s.sweep[-1], TOTAL, "the sweep of the last snapshot")
        last = s[-1]
        self.assertEqual((last.dtype, last.shape), (np.int8, (16, 16)))
        self.assertTrue(np.all(np.abs(last) == 1), "a snapshot holds values other than +-1")
        self.assertTrue(np.array_equal(s[s.count - 1], last)
                        and np.array_equal(s[0:s.count][-1], last),
                        "frame indexing and slicing disagree")
        self.assertEqual(sum(1 for _ in s), s.count, "iterating over the snapshots")
        e, m = energy_magnetization(last)
        self.assertTrue(e == run_.observables["energy"][-1]
                        and m == run_.observables["magnetization"][-1],
                        f"last frame gives E/V={e}, M/V={m}; the last measurement is "
                        f"{run_.observables['energy'][-1]}, "
                        f"{run_.observables['magnetization'][-1]}")
        return run_

    def test_file(self):
        self.check_file(self.output("bytes"))

    def test_bit_packed_snapshots(self):
        """The same chain with bit-packed snapshots reads back as the same +-1 frames."""
        bytes_run = self.check_file(self.output("bytes"))
        bits_run = self.check_file(self.output("bits"))
        self.assertTrue(bits_run.snapshots.bit_packed and not bytes_run.snapshots.bit_packed,
                        "the bit-packed file is not read as bit-packed")
        self.assertTrue(np.array_equal(bits_run.snapshots[:], bytes_run.snapshots[:]),
                        "bit-packed snapshots differ from the byte ones")

    def test_truncation(self):
        """A file whose committed lengths are short reads only the committed part."""
        cut = os.path.join(self.scratch, "cut.h5")
        shutil.copyfile(self.output("bytes"), cut)
        with h5py.File(cut, "r+") as f:
            f["observables"].attrs["committed_length"] = np.int64(5)
            f["snapshots"].attrs["committed_length"] = np.int64(1)
        run_ = lattica_file.load(cut)
        for name, series in run_.observables.items():
            self.assertEqual(len(series), 5, f"truncated {name}")
        self.assertEqual(len(run_.sweep), 5, f"truncated sweeps {run_.sweep}")
        self.assertEqual(run_.sweep[-1], THERMALIZATION + 5 * MEASURE_EVERY,
                         f"truncated sweeps {run_.sweep}")
        self.assertEqual(run_.snapshots.count, 1)
        self.assertEqual(run_.snapshots.shape, (1, 16, 16))
        with self.assertRaises(IndexError, msg="reading an uncommitted frame"):
            run_.snapshots[1]

    def foreign_file(self):
        """A copy of sim's file whose schema attribute is somebody/2."""
        other = os.path.join(self.scratch, "other.h5")
        shutil.copyfile(self.output("bytes"), other)
        with h5py.File(other, "r+") as f:
            del f.attrs["schema"]
            f.attrs["schema"] = "somebody/2"
        return other

    def test_schema_error(self):
        with self.assertRaises(lattica_file.SchemaError,
                               msg="a file with schema somebody/2 was accepted") as caught:
            lattica_file.load(self.foreign_file())
        self.assertIn("lattica/1", str(caught.exception), "unclear schema error")
        self.assertIn("somebody/2", str(caught.exception), "unclear schema error")

    def test_info_command(self):
        out = self.output("bytes")
        info = run([sys.executable, "-m", "analysis", "info", out], TIMEOUT, merge_stderr=True,
                   env=analysis_env(), cwd=self.scratch)
        self.assertEqual(info.returncode, 0, f"analysis info:\n{info.stdout}")
        for text in ("lattica/1", "energy", "magnetization", "16 x 16", str(SEED), "cpu",
                     "no error bars"):
            with self.subTest(text=text):
                self.assertIn(text, info.stdout, "analysis info output")

    def test_info_command_on_a_foreign_file(self):
        bad = run([sys.executable, "-m", "analysis", "info", self.foreign_file()], TIMEOUT,
                  merge_stderr=True, env=analysis_env(), cwd=self.scratch)
        self.assertNotEqual(bad.returncode, 0, f"analysis info on a foreign file:\n{bad.stdout}")
        self.assertIn("lattica/1", bad.stdout, "analysis info on a foreign file")


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/python3
"""The analysis package reads what sim writes.

    test_reads_output.py SIM_EXE INPUT_TOML

Runs sim on INPUT_TOML made small (CPU backend, 16x16, a few sweeps) into a temporary
directory, loads the file with analysis.lattica_file and checks lengths, dtypes, metadata,
truncation to committed_length and the schema check, and that bit-packed snapshots
(output.snapshot_packing = "bits") read back as the same frames; then runs
`python3 -m analysis info`.
Exits non-zero with a message on any failure.
"""

import os
import pathlib
import shutil
import sys
import tempfile

import h5py
import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from script_support import (analysis_env, arguments, check, finish, run,  # noqa: E402
                            sim_command, sim_env)

from analysis import lattica_file  # noqa: E402

THERMALIZATION, MEASUREMENTS, MEASURE_EVERY, SNAPSHOT_EVERY, SEED = 10, 25, 2, 20, 31337
TOTAL = THERMALIZATION + MEASUREMENTS * MEASURE_EVERY
TIMEOUT = 120  # seconds, each command; stdout and stderr come together


def energy_magnetization(frame):
    """Per-site energy (h = 0) and magnetization of a periodic 2D frame."""
    s = frame.astype(np.int64)
    bonds = np.sum(s * (np.roll(s, -1, axis=0) + np.roll(s, -1, axis=1)))
    return -float(bonds) / s.size, float(np.sum(s)) / s.size


def check_file(path, input_toml):
    run_ = lattica_file.load(path)
    a = run_.attrs
    check(a["schema"] == "lattica/1", f"schema {a['schema']!r}")
    check(a["backend"] == "cpu", f"backend {a['backend']!r}")
    check(a["model"] == "ising", f"model {a['model']!r}")
    check(a["seed"] == SEED, f"seed {a['seed']!r}, expected {SEED}")
    check(a["h"] == 0.0, f"h {a['h']!r}")
    check(isinstance(a["beta"], float), f"beta {a['beta']!r} is not a float")
    check(a["input_toml"] == input_toml, "input_toml differs from the input file")
    check(run_.dims == (16, 16), f"lattice dims {run_.dims}")
    for key in ("program_version", "git_commit", "created_utc", "device", "resolved_config"):
        check(isinstance(a.get(key), str) and a[key], f"attribute {key} missing or empty")

    check(sorted(run_.observables) == ["energy", "magnetization"],
          f"observables {sorted(run_.observables)}")
    for name, series in run_.observables.items():
        check(series.dtype == np.float64, f"{name} dtype {series.dtype}")
        check(series.shape == (MEASUREMENTS,), f"{name} shape {series.shape}")
    expected_sweeps = THERMALIZATION + MEASURE_EVERY * np.arange(1, MEASUREMENTS + 1)
    check(run_.sweep.dtype == np.int64, f"sweep dtype {run_.sweep.dtype}")
    check(np.array_equal(run_.sweep, expected_sweeps), f"sweeps {run_.sweep}")
    check(len(run_) == MEASUREMENTS, f"len {len(run_)}")

    s = run_.snapshots
    check(s.count >= 1 and s.shape == (s.count, 16, 16), f"snapshot shape {s.shape}")
    check(s.sweep.dtype == np.int64 and len(s.sweep) == s.count, f"snapshot sweeps {s.sweep}")
    check(s.sweep[-1] == TOTAL, f"last snapshot at sweep {s.sweep[-1]}, expected {TOTAL}")
    last = s[-1]
    check(last.dtype == np.int8 and last.shape == (16, 16), f"frame {last.dtype} {last.shape}")
    check(np.all(np.abs(last) == 1), "a snapshot holds values other than +-1")
    check(np.array_equal(s[s.count - 1], last) and np.array_equal(s[0:s.count][-1], last),
          "frame indexing and slicing disagree")
    check(sum(1 for _ in s) == s.count, "iterating over the snapshots")
    e, m = energy_magnetization(last)
    check(e == run_.observables["energy"][-1] and m == run_.observables["magnetization"][-1],
          f"last frame gives E/V={e}, M/V={m}; the last measurement is "
          f"{run_.observables['energy'][-1]}, {run_.observables['magnetization'][-1]}")
    return run_


def check_truncation(path, scratch):
    """A file whose committed lengths are short reads only the committed part."""
    cut = os.path.join(scratch, "cut.h5")
    shutil.copyfile(path, cut)
    with h5py.File(cut, "r+") as f:
        f["observables"].attrs["committed_length"] = np.int64(5)
        f["snapshots"].attrs["committed_length"] = np.int64(1)
    run_ = lattica_file.load(cut)
    for name, series in run_.observables.items():
        check(len(series) == 5, f"truncated {name} has length {len(series)}")
    check(len(run_.sweep) == 5 and run_.sweep[-1] == THERMALIZATION + 5 * MEASURE_EVERY,
          f"truncated sweeps {run_.sweep}")
    check(run_.snapshots.count == 1 and run_.snapshots.shape == (1, 16, 16),
          f"truncated snapshots {run_.snapshots.shape}")
    try:
        run_.snapshots[1]
        check(False, "reading an uncommitted frame did not raise IndexError")
    except IndexError:
        pass


def check_schema_error(path, scratch):
    other = os.path.join(scratch, "other.h5")
    shutil.copyfile(path, other)
    with h5py.File(other, "r+") as f:
        del f.attrs["schema"]
        f.attrs["schema"] = "somebody/2"
    try:
        lattica_file.load(other)
        check(False, "a file with schema somebody/2 was accepted")
    except lattica_file.SchemaError as e:
        check("lattica/1" in str(e) and "somebody/2" in str(e), f"unclear schema error: {e}")
    return other


def main():
    sim, input_path = arguments(2, __doc__)
    with open(input_path, encoding="utf-8") as f:
        input_toml = f.read()
    env = analysis_env()

    with tempfile.TemporaryDirectory(prefix="lattica_analysis_") as scratch:
        out = os.path.join(scratch, "out.h5")
        result = run(sim_command(sim, input_path, out, SEED, "lattice.dims=[16,16]",
                                 f"run.thermalization={THERMALIZATION}",
                                 f"run.measurements={MEASUREMENTS}",
                                 f"run.measure_every={MEASURE_EVERY}",
                                 f"output.snapshot_every={SNAPSHOT_EVERY}", quiet=False),
                     TIMEOUT, merge_stderr=True, env=sim_env(override=False))
        if result.returncode != 0:
            print(f"FAIL: sim exited with {result.returncode}:\n{result.stdout}", file=sys.stderr)
            return 1

        bytes_run = check_file(out, input_toml)
        # The same chain with bit-packed snapshots reads back as the same +-1 frames.
        bits_out = os.path.join(scratch, "bits.h5")
        result = run(sim_command(sim, input_path, bits_out, SEED, "lattice.dims=[16,16]",
                                 f"run.thermalization={THERMALIZATION}",
                                 f"run.measurements={MEASUREMENTS}",
                                 f"run.measure_every={MEASURE_EVERY}",
                                 f"output.snapshot_every={SNAPSHOT_EVERY}",
                                 "output.snapshot_packing=bits"),
                     TIMEOUT, merge_stderr=True, env=sim_env(override=False))
        if check(result.returncode == 0, f"sim (bits) exited with {result.returncode}:\n"
                                         f"{result.stdout}"):
            bits_run = check_file(bits_out, input_toml)
            check(bits_run.snapshots.bit_packed and not bytes_run.snapshots.bit_packed,
                  "the bit-packed file is not read as bit-packed")
            check(np.array_equal(bits_run.snapshots[:], bytes_run.snapshots[:]),
                  "bit-packed snapshots differ from the byte ones")
        check_truncation(out, scratch)
        other = check_schema_error(out, scratch)

        info = run([sys.executable, "-m", "analysis", "info", out], TIMEOUT, merge_stderr=True,
                   env=env, cwd=scratch)
        if check(info.returncode == 0,
                 f"analysis info exited with {info.returncode}:\n{info.stdout}"):
            for text in ("lattica/1", "energy", "magnetization", "16 x 16", str(SEED), "cpu",
                         "no error bars"):
                check(text in info.stdout, f"analysis info output lacks {text!r}:\n{info.stdout}")
        bad = run([sys.executable, "-m", "analysis", "info", other], TIMEOUT, merge_stderr=True,
                  env=env, cwd=scratch)
        check(bad.returncode != 0 and "lattica/1" in bad.stdout,
              f"analysis info on a foreign file exited with {bad.returncode}:\n{bad.stdout}")
    return finish(f"ok: analysis reads sim's output ({MEASUREMENTS} measurements, 16x16)")


if __name__ == "__main__":
    sys.exit(main())

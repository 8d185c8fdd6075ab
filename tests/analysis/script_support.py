"""Helpers shared by the Python test scripts in this directory.

A script finds this module through its own directory:

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
    from script_support import ...  # noqa: E402

Importing it puts the repository root (REPO) first on sys.path, so that `analysis` imports
from this checkout. The tests are unittest test cases; these are helpers for running sim and
the analysis commands and for making data, not assertions.
"""

import math
import os
import pathlib
import subprocess
import sys
import tempfile
import unittest

REPO = pathlib.Path(__file__).resolve().parents[2]
LATTICE_TOML = REPO / "inputs" / "lattice.toml"
sys.path.insert(0, str(REPO))


def positional_arguments(count, usage=None):
    """Takes up to count leading command-line arguments that are not options (the paths CMake
    passes, such as sim's) off sys.argv and returns count values in order, None for any not
    given; what is left in sys.argv (-v, -k ...) is for unittest.main(). Where usage is given,
    all count are required: a missing one prints usage to stderr and exits with status 2."""
    values = []
    for _ in range(count):
        if len(sys.argv) > 1 and not sys.argv[1].startswith("-"):
            values.append(sys.argv.pop(1))
        else:
            values.append(None)
    if usage is not None and None in values:
        print(usage, file=sys.stderr)
        sys.exit(2)
    return values


def run(command, timeout, merge_stderr=False, **kwargs):
    """Runs a command with text output captured (stderr into stdout where merge_stderr). A
    command that cannot start or runs past timeout seconds raises (OSError,
    subprocess.TimeoutExpired), which fails the test that ran it."""
    return subprocess.run(command, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE,
                          text=True, timeout=timeout, **kwargs)


def call_analysis(*argv):
    """Runs `python3 -m analysis ARGV...` in this process: (status, stdout, stderr)."""
    import io
    from contextlib import redirect_stderr, redirect_stdout

    from analysis import __main__ as cli
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            status = cli.main(list(argv))
        except SystemExit as e:
            status = e.code
    return status, out.getvalue(), err.getvalue()


def analysis_env():
    """os.environ with the repository root first on PYTHONPATH, for `python3 -m analysis`."""
    return dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p))


def sim_env(override=True):
    """os.environ for running sim: idle OpenMP threads sleep rather than spin while other
    tests share the cores. override=False keeps an OMP_WAIT_POLICY already set."""
    env = dict(os.environ)
    if override:
        env["OMP_WAIT_POLICY"] = "passive"
    else:
        env.setdefault("OMP_WAIT_POLICY", "passive")
    return env


def sim_command(sim, input_toml, out, seed, *settings, quiet=True):
    """sim's command line for a CPU run of input_toml into out, with `--set` for each
    "key=value" of settings, in order."""
    command = [sim, str(input_toml), "--backend", "cpu", *(["--quiet"] if quiet else []),
               "--output", out, "--seed", str(seed)]
    for setting in settings:
        command += ["--set", setting]
    return command


def ar1(rng, a, shape):
    """AR(1) chains along axis 0, x_t = a x_{t-1} + sqrt(1 - a^2) eps_t: unit stationary
    variance, started in equilibrium; shape (n,) or (n, replicas)."""
    from scipy.signal import lfilter  # only the scripts that make chains need scipy
    eps = rng.standard_normal(shape)
    x, _ = lfilter([math.sqrt(1.0 - a * a)], [1.0, -a], eps, axis=0,
                   zi=a * rng.standard_normal((1,) + tuple(shape[1:])))
    return x


class ScratchCase(unittest.TestCase):
    """A test case with its own temporary directory and a seeded random generator."""
    prefix = "lattica_test_"
    seed = 2024

    def setUp(self):
        import numpy as np
        self._dir = tempfile.TemporaryDirectory(prefix=self.prefix)
        self.dir = self._dir.name
        self.rng = np.random.default_rng(self.seed)

    def tearDown(self):
        self._dir.cleanup()

    def path(self, name):
        return os.path.join(self.dir, name)


def exact_square_ising(length, beta):
    """<e> per site and ln Z of the periodic L x L Ising model at h = 0, by exact enumeration of
    its 2^(L^2) states (L = 4 has 65536)."""
    import numpy as np
    sites = length * length
    codes = np.arange(1 << sites, dtype=np.int64)
    s = (1 - 2 * ((codes[:, None] >> np.arange(sites)) & 1)).reshape(-1, length, length)
    bonds = np.sum(s * (np.roll(s, -1, axis=1) + np.roll(s, -1, axis=2)), axis=(1, 2))
    x = beta * bonds.astype(np.float64)
    top = x.max()
    w = np.exp(x - top)
    log_z = top + np.log(w.sum())
    w /= w.sum()
    return {"energy": float(np.dot(w, -bonds / sites)), "log_z": float(log_z)}

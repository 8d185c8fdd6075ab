#!/usr/bin/python3
"""Installing on a cluster, as the README shows it.

    test_install.py CMAKE BUILD_DIR

Installs BUILD_DIR into a temporary prefix (`cmake --install BUILD_DIR --prefix DIR`), runs the
installed sim on the installed default input (with fewer sweeps) and the installed
`lattica-analysis summary` on its output, from another directory and without PYTHONPATH, and checks the command prints what
`python3 -m analysis summary` prints; then installs the analysis package offline with pip into a
virtual environment over the system's packages and runs its `lattica-analysis` the same way.
unittest test cases; arguments after BUILD_DIR go to unittest (-v, -k PATTERN).
"""

import os
import pathlib
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "analysis"))

from script_support import REPO, positional_arguments, run, sim_env  # noqa: E402

CMAKE, BUILD_DIR = positional_arguments(2, __doc__)
TIMEOUT = 240  # seconds, each command


def clean_env():
    """sim's environment without PYTHONPATH: the installed command must find its package."""
    env = sim_env()
    env.pop("PYTHONPATH", None)
    return env


class InstallTest(unittest.TestCase):
    """One installation and one run of the default input, shared by the tests."""

    @classmethod
    def setUpClass(cls):
        cls._scratch = tempfile.TemporaryDirectory(prefix="lattica_install_")
        cls.scratch = pathlib.Path(cls._scratch.name)
        cls.prefix = cls.scratch / "prefix"
        r = run([CMAKE, "--install", BUILD_DIR, "--prefix", str(cls.prefix)], TIMEOUT,
                merge_stderr=True)
        if r.returncode != 0:
            raise AssertionError(f"cmake --install failed:\n{r.stdout}")
        cls.workdir = cls.scratch / "job"
        cls.workdir.mkdir()
        cls.output = cls.workdir / "lattice.h5"
        # The installed default input on the CPU backend (CI has no GPU), shortened to keep CI
        # quick, into the job directory.
        cls.sim_run = run([str(cls.prefix / "bin" / "sim"),
                           str(cls.prefix / "share" / "lattica" / "inputs" / "lattice.toml"),
                           "--backend", "cpu", "--quiet", "--output", str(cls.output),
                           "--set", "run.thermalization=200", "--set", "run.measurements=1000"],
                          TIMEOUT, cwd=cls.workdir, env=clean_env())
        module = run([sys.executable, "-m", "analysis", "summary", str(cls.output)], TIMEOUT,
                     cwd=REPO, env=dict(os.environ, PYTHONPATH=str(REPO)))
        cls.module_summary = module.stdout

    @classmethod
    def tearDownClass(cls):
        cls._scratch.cleanup()

    def summary_with(self, command):
        """`COMMAND summary OUTPUT` from the job directory: its stdout, after checking it ran."""
        r = run([str(command), "summary", str(self.output)], TIMEOUT, cwd=self.workdir,
                env=clean_env())
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout

    def test_layout(self):
        for path in ("bin/sim", "bin/lattica-analysis", "share/lattica/inputs/slurm_sweep.sh"):
            mode = (self.prefix / path).stat().st_mode
            self.assertTrue(mode & stat.S_IXUSR, f"{path} is not executable")
        self.assertTrue((self.prefix / "share/lattica/inputs/phi4_3d.toml").is_file())
        packages = list(self.prefix.glob("lib*/lattica/python/analysis/__main__.py"))
        self.assertEqual(len(packages), 1, "the analysis package is installed once")

    def test_installed_sim_runs_default_input(self):
        self.assertEqual(self.sim_run.returncode, 0, self.sim_run.stderr)
        self.assertTrue(self.output.is_file())

    def test_installed_command_equals_module(self):
        self.assertEqual(self.sim_run.returncode, 0, self.sim_run.stderr)
        summary = self.summary_with(self.prefix / "bin" / "lattica-analysis")
        self.assertIn("|m|", summary)
        self.assertEqual(summary, self.module_summary)

    def test_usage_names_the_command(self):
        r = run([str(self.prefix / "bin" / "lattica-analysis"), "--help"], TIMEOUT,
                env=clean_env())
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(r.stdout.startswith("usage: lattica-analysis"), r.stdout[:80])
        r = run([str(self.prefix / "bin" / "lattica-analysis"), "no-such-command"], TIMEOUT,
                env=clean_env())
        self.assertEqual(r.returncode, 2)

    def test_pip_install_offline(self):
        """pyproject.toml: pip builds and installs the package with the system's setuptools,
        no index, no build isolation, into a venv that sees the system's h5py and numpy."""
        self.assertEqual(self.sim_run.returncode, 0, self.sim_run.stderr)
        source = self.scratch / "analysis"  # a copy: pip builds in the source directory
        shutil.copytree(REPO / "analysis", source,
                        ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
        venv = self.scratch / "venv"
        subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
                       check=True, timeout=TIMEOUT)
        r = run([str(venv / "bin" / "pip"), "install", "--quiet", "--no-build-isolation",
                 "--no-index", str(source)], TIMEOUT, merge_stderr=True, env=clean_env())
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertEqual(self.summary_with(venv / "bin" / "lattica-analysis"),
                         self.module_summary)


if __name__ == "__main__":
    unittest.main(verbosity=2)

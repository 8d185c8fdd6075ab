"""Command line: python3 -m analysis info FILE...

`info` prints each file's metadata, the length, plain sample mean and first/last sweep of
every observable, and the snapshot count and shape. The means are plain sample means
without error bars: consecutive measurements of a Markov chain are correlated, so an honest
error needs the autocorrelation time (the Gamma method), which `info` does not estimate.
"""

import argparse
import io
import sys

import numpy as np

from analysis import lattica_file

INFO_DESCRIPTION = ("Prints each file's metadata, every observable's length, plain sample mean "
                    "(no error bars) and first/last sweep, and the snapshot count and shape.")


def _dims(shape):
    return " x ".join(str(int(n)) for n in shape)


def info(path, out=sys.stdout):
    run = lattica_file.load(path)
    a = run.attrs
    rows = [
        ("schema", a.get("schema")),
        ("version", a.get("program_version")),
        ("commit", a.get("git_commit")),
        ("created", a.get("created_utc")),
        ("backend", a.get("backend")),
        ("device", a.get("device")),
        ("model", f"{a.get('model')} ({a.get('algorithm')})"),
        ("lattice", _dims(run.dims)),
        ("beta", repr(a.get("beta"))),
        ("h", repr(a.get("h"))),
        ("seed", a.get("seed")),
    ]
    print(path, file=out)
    for name, value in rows:
        print(f"  {name:<10} {value}", file=out)

    print(f"  observables: {len(run)} measurements (plain sample means, no error bars)", file=out)
    print(f"    {'name':<16} {'length':>8} {'mean':>22} {'first sweep':>12} {'last sweep':>12}",
          file=out)
    first = str(run.sweep[0]) if len(run) else "-"
    last = str(run.sweep[-1]) if len(run) else "-"
    for name, series in run.observables.items():
        mean = f"{np.mean(series):.15g}" if len(series) else "-"
        print(f"    {name:<16} {len(series):>8} {mean:>22} {first:>12} {last:>12}", file=out)

    s = run.snapshots
    line = f"  snapshots: {s.count} frames of {_dims(s.frame_shape)}, shape {s.shape}"
    if s.count:
        line += f", sweeps {s.sweep[0]} .. {s.sweep[-1]}"
    print(line, file=out)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m analysis",
                                     description="Reads Lattica output files.")
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("info", help="metadata, series lengths and plain sample means",
                            description=INFO_DESCRIPTION)
    p.add_argument("files", nargs="+", metavar="FILE")
    args = parser.parse_args(argv)

    status = 0
    for i, path in enumerate(args.files):
        try:
            report = io.StringIO()
            info(path, report)
        except (OSError, lattica_file.SchemaError, KeyError) as e:
            print(f"{path}: error: {e}", file=sys.stderr)
            status = 1
            continue
        print(("\n" if i else "") + report.getvalue(), end="")
    return status


if __name__ == "__main__":
    sys.exit(main())

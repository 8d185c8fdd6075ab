"""Command line: python3 -m analysis COMMAND ...

    info FILE...                  metadata, series lengths, plain sample means (no errors)
    summary FILE... [--cut N] [--json [PATH]]
                                  thermalisation cut, means with Gamma-method errors and
                                  tau_int, U4, chi, C
    reweight FILE --beta B [B ...] [--cut N] [--json [PATH]]
                                  single-histogram reweighting to other couplings
    crossing FILE... [--cut N] [--json [PATH]]
                                  Binder-cumulant crossings between lattice sizes
    effmass FILE [--momentum INDEX|all] [--cut N] [--json [PATH]]
                                  time-slice correlators C(dt, p) and cosh effective masses
                                  with blocked-jackknife errors
    plot FILE... [--out DIR] [--cut N]
                                  PNG figures
    tempering FILE... [--reweight X [X ...]] [--cut N] [--json [PATH]]
                                  parallel tempering: per-rung summaries, exchange acceptance,
                                  round trips, MBAR reweighting across rungs, a
                                  feedback-optimised ladder (one step)
    multicanonical FILE [--beta B [B ...]] [--first-order] [--blocks N] [--json [PATH]]
                                  multicanonical run: ln g(E) with errors, reweighting to any
                                  beta (e, C, U4, free energy), equal-height P(E) and the
                                  interface tension at a first-order transition
    annealing FILE... [--json [PATH]] [--plot PNG]
                                  population annealing: per-step beta F per site with its
                                  error from independent populations, <e>, <|m|>, <m^2>,
                                  families, rho_t
    dynamics FILE... [--rates JSON] [--rate KEY=VALUE]... [--extrapolate L]
             [--reference NAME] [--cut N] [--json [PATH]] [--plot PNG]
                                  tau_int of e, |m|, m^2 per run in sweeps, fits tau = A L^z
                                  per update algorithm, independent samples per second and
                                  the gain over a reference algorithm

FILE is a sim output file (.h5) or a sweep index (.json), which stands for its points' files;
a point whose file is missing is reported on stderr and skipped. Exit status: 0 when every
file was analysed, 1 when some could not be read (the rest are still analysed), 2 on bad
usage or when the command does not apply to the files' model (reweight and crossing need a
beta: phi4 runs have none) or contents (effmass needs /correlators/timeslice).

Models: ising, potts, on (O(n) vectors, n = 2..4) and phi4 (scalar field, kappa form);
summary.py lists each one's observables and derived quantities.
"""

import argparse
import io
import json
import math
import os
import sys

import numpy as np

from analysis import correlators, lattica_file

INFO_DESCRIPTION = ("Prints each file's metadata (with the model's parameters: beta or, for "
                    "phi4, kappa and lambda; q, n, precision, hits, update sequence, tuned "
                    "Metropolis step and acceptance where present), every observable's shape, "
                    "plain sample mean (no error bars) and first/last sweep, the histograms, "
                    "the snapshot count, shape and dtype, and the correlator groups "
                    "(/correlators/structure_factor, /correlators/timeslice) where the run "
                    "measured them.")

CUT_HELP = ("discard the first N measurements of every replica (default: automatic, the "
            "smallest of 0, 1/16, 1/8, 1/4, 1/2 of the series whose kept part shows no drift: "
            "its first- and second-half means of e and m^2 agree within 3 combined Gamma "
            "errors)")
JSON_HELP = ("write the results as JSON to PATH, or to stdout (instead of the table) when PATH "
             "is omitted or '-'; put it after the files or write --json=PATH")

SUMMARY_DESCRIPTION = """\
For each file: the thermalisation cut, then mean, error, integrated autocorrelation time
tau_int (in measurements and in sweeps) and summation window W of the primary observables
(per site) and the derived quantities. Ising and Potts: e, m, |m|, m^2, m^4, e^2 and
  U4    = 1 - <m^4> / (3 <m^2>^2)          Binder cumulant
  chi   = beta V (<m^2> - <|m|>^2)         susceptibility
  chi'  = beta V <m^2>                     (h = 0 only)
  chi_c = beta V (<m^2> - <m>^2)           (h != 0 only)
  C     = beta^2 V (<e^2> - <e>^2)         specific heat
O(n) ("on"; m = |m|, the modulus of the magnetisation vector): e, |m|, m^2, m^4, e^2 (and
m_0, m_0^2 along the field at h != 0), the same chi, chi', C, chi_c of m_0, and
  U4    = (n+2)/2 (1 - n/(n+2) <m^4>/<m^2>^2)   0 for a Gaussian m vector, 1 when ordered
for n = 2 also helicity_a (its mean is the helicity modulus along axis a) and
  Upsilon = (1/d) sum_a <helicity_a>       their average
phi4 (m = phi, the signed mean field; no beta): m, |m|, m^2, m^4, phi2, link, action, the
scalar U4 and chi = V (<m^2> - <|m|>^2), chi' = V <m^2> or chi_c = V (<m^2> - <m>^2) without a
beta factor, and no specific heat.
Ising and Potts runs with a cluster pass at h = 0 also have m2_improved, an improved estimator
of <M^2>/V = V <m^2> (Swendsen-Wang: sum_C |C|^2 / V; Wolff: the mean cluster size); it is
compared with the plain V <m^2> (Potts: |m|^2, m the modulus): both with errors and tau_int,
their difference in units of the Gamma error of the paired differences V m_t^2 -
m2_improved_t (a warning beyond 3), and the ratio of the plain error to the improved one.
Errors from the Gamma method (U. Wolff, Comput. Phys. Commun. 156 (2004) 143; S_tau =
1.5, bias-corrected; replicas combined; with R >= 2 replicas the derived values also have
their O(1/N) bias cancelled with the per-replica estimates). A W marked '!' means no window
met Wolff's criterion below half the series: the series is too short for its
autocorrelations.
With /correlators/structure_factor (measure.structure_factor = true): S(0), S(k_min) and
  xi2   = sqrt(<S(0)>/<S(k_min)> - 1) / (2 sin(pi/L))   second-moment correlation length
(L the longest extent) from the means of the series rows at or after the first sweep the cut
keeps, with Gamma-method errors, next to the file's own xi2 attribute (all samples, no
error)."""

REWEIGHT_DESCRIPTION = """\
Single-histogram (Ferrenberg-Swendsen) reweighting of one run's time series from the
simulated beta to the target couplings at the same field h: weights exp(-(B - beta) V e),
with e the energy per site including the field term. Prints <e>, <|m|>, <m^2>, U4, C =
B^2 V (<e^2> - <e>^2) and chi = B V (<m^2> - <|m|>^2) with blocked-jackknife errors (blocks
about 20 tau_int long from the Gamma analysis, at least 20 blocks), and the effective sample
fraction of the weights. A target whose reweighted mean energy lies outside the central 95 %
of the sampled energies (beyond the printed reliable range) is flagged: the result rests on
the tails of the sampled distribution and is not trustworthy. O(n) runs work the same way
(every measured energy is its own level; m = |m|, U4 in the O(n) normalisation). phi4 runs
have no beta and are refused (exit status 2)."""

CROSSING_DESCRIPTION = """\
Groups the runs by lattice_dims (runs with equal dims, beta and h are merged as replicas) and,
for each pair of consecutive sizes (by volume), finds the couplings where their Binder
cumulants U4 cross. Each size's U4(beta) is reweighted from its simulated point nearest to
beta; the search covers the overlap of both sizes' reliable reweighting ranges; roots by
Brent's method. Errors: a blocked jackknife over the blocks of each size's source run, roots
found again per sample; the two sizes' jackknife variances add. When the curves do not cross
in that range the command says so. All runs must be of one model with a beta (ising, potts,
on; U4 as in summary); phi4 runs or a mix of models are refused (exit status 2)."""

EFFMASS_DESCRIPTION = """\
Reads /correlators/timeslice (measure.timeslice = true; the last lattice axis is time, T =
L_{d-1}) and prints, for one projected momentum p (--momentum: its row in the file's
momenta, 0 = zero momentum, default 0; 'all' for every one), C(dt, p) averaged over the
measurements and replicas kept and the cosh effective mass m_eff(dt), the m solving
  C(dt) / C(dt + 1) = cosh(m (dt - T/2)) / cosh(m (dt + 1 - T/2))
(NaN where no m >= 0 does: a non-positive C, a ratio on the wrong side of 1, dt = (T-1)/2
for odd T). For p != 0 m_eff measures E(p), the energy of the lowest state of momentum p.
Errors: blocked jackknife over blocks of consecutive measurements in each replica, 20 times
the integrated autocorrelation time of C(dt = 1, p) long (Gamma method) with at least 20 and
at most 200 blocks; a leave-one-block-out m_eff per block. The rows kept are those measured at
or after the first sweep that the observables' thermalisation cut keeps (as in summary).
Since C(dt) = C(T - dt), the table stops at dt = T/2; --json holds every dt = 0 .. T-1."""

MOMENTUM_HELP = ("row of /correlators/timeslice/momenta to analyse (0: p = 0, the default), or "
                 "'all'")

DYNAMICS_DESCRIPTION = """\
Each FILE is one run of one update sequence at one lattice size (any number of replicas).
Per run: tau_int of e, |m| and m^2 (Gamma method, replicas combined) in sweeps, a sweep being
one pass of the whole update sequence (measure_every times tau_int in measurements; a "wolff"
pass of N clusters is one sweep), and, with a rate, the independent samples per second
  rate 1e9 / (passes V 2 tau_int)        rate in site updates/ns as sim counts them
for Wolff runs also the flipped fraction per sweep N <|C|>/V (<|C|> = <m2_improved>) and
tau_int in Wolff units. Per algorithm (the sequence; with the cluster count when
update.wolff_clusters != 1) and observable: the fit tau_int = A L^z (weighted least squares in
log-log, z with its error and chi^2/dof), the fitted tau_int and samples per second at
L = --extrapolate, and the gain over the --reference algorithm (samples/s ratio) there and at
each size both measured.
sim prints a run's rate when it ends but does not store it in the file: give it with --rates
(a JSON side file, as tests/bench/cluster_dynamics.py writes: {"runs": [{"file": F,
"site_updates_per_ns": X}, ...]}, or a plain {F: X}) or --rate KEY=VALUE, KEY a file, a size
L or LABEL:L. The extrapolation uses the rate of each algorithm's largest size unless
--extrapolation-rate LABEL=VALUE gives the rate at that size. --fit-sizes MIN:MAX fits only
those sizes (all are still listed). A FILE ending in .json is an earlier --json document of
this command: its runs and their rates are analysed again (to refit or re-extrapolate a
committed result without its runs' files). dynamics.py has the details."""

PLOT_DESCRIPTION = """\
Writes PNG figures into DIR and prints their paths: per file <stem>.series.png (e and m
against the sweep, thermalisation cut marked), <stem>.hist.png (energy and magnetization
histograms, exact ones from /histograms when present), <stem>.autocorr.png (normalised
autocorrelation of e and m^2 with the window W); when the files span two or more couplings,
vs_beta.png (U4, chi, C and <|m|> against beta with errors, one curve per lattice size, the
reweighted curve as a line between the points). Where the run measured them,
<stem>.structure.png (the radially binned S(|k|) on a log scale, G(r) and G_connected(r) along
axis 0) and <stem>.timeslice.png (C(dt) per momentum on a log scale and m_eff(dt) with
jackknife errors, as effmass computes them). For O(n) m is |m|; for phi4 e is the action
density and m = phi, and the figure across runs is vs_kappa.png (U4, chi, <phi2>, <|m|>,
points only). Files of different models get no figure across runs."""


def _dims(shape):
    return " x ".join(str(int(n)) for n in shape)


def _model_size(a):
    """' q = 3' for Potts, ' n = 2' for O(n), '' otherwise."""
    for name in ("q", "n"):
        if name in a:
            return f" {name} = {int(a[name])}"
    return ""


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
        ("model", f"{a.get('model')}{_model_size(a)} ({a.get('algorithm')})"),
    ]
    # The continuous models' settings, each only where the file has it.
    if "precision" in a:
        rows.append(("precision", a["precision"]))
    if "hits" in a:
        rows.append(("hits", f"{a['hits']} (Metropolis proposals per site and pass)"))
    if "metropolis_step" in a:
        acceptance = a.get("metropolis_acceptance")
        measured = (f"acceptance {acceptance:.4g}" if acceptance is not None and acceptance >= 0
                    else "acceptance not measured")
        rows.append(("step", f"{a['metropolis_step']!r} (Metropolis step, {measured})"))
    if "langevin_step" in a:
        acceptance = a.get("mala_acceptance")
        detail = (f", MALA acceptance {acceptance:.4g}" if acceptance is not None and acceptance >= 0
                  else "")
        rows.append(("langevin", f"step {a['langevin_step']!r}, kernel shift "
                                 f"{a['langevin_shift']:.6g}{detail}"))
    rows.append(("lattice", _dims(run.dims)))
    # phi4 has kappa and lambda instead of beta.
    for name in ("beta", "kappa", "lambda"):
        if name in a:
            rows.append((name, repr(a[name])))
    rows += [
        ("h", repr(a.get("h"))),
        ("seed", a.get("seed")),
        ("replicas", run.replicas),
    ]
    if run.tempered:  # the root's couplings are the first rung's
        from analysis import tempering
        t = tempering.read_tempering(path)
        ladder = "; ".join(f"{name} = [{', '.join(f'{x:.6g}' for x in t.couplings[name])}]"
                           for name in t.tempered)
        rows.append(("tempering", f"{t.rungs} rungs x {t.ladders} ladder(s), exchanges every "
                                  f"{t.exchange_every} sweep(s): {ladder} (columns in rung "
                                  f"order; see 'analysis tempering')"))
    from analysis import multicanonical
    try:
        m = multicanonical.read(path)
        iterations, sweeps = multicanonical.refinement(m)
        refined = f"refinement {iterations} x {sweeps} sweeps, " if iterations else ""
        rows.append(("multicanonical", f"{m.attrs['walkers']} walkers, Wang-Landau "
                                       f"{m.attrs['stages']} stages to ln f = "
                                       f"{m.attrs['lnf_reached']:.3g}, {refined}"
                                       f"{m.energy_series.shape[0]} measurements (see "
                                       f"'analysis multicanonical')"))
    except ValueError:
        pass  # not a multicanonical run
    from analysis import annealing
    pa = annealing.read_annealing(path)
    if pa is not None:  # the root's beta is the schedule's last
        betas = pa.columns["beta"]
        rows.append(("annealing", f"{len(betas)} steps, beta {betas[0]:.6g} to {betas[-1]:.6g}, "
                                  f"{pa.replicas} replicas in {pa.populations} population(s) "
                                  f"(no /observables rows; see 'analysis annealing')"))
    if run.point_index is not None:
        rows.append(("point", run.point_index))
    swept = a.get("swept_parameters")
    if swept:
        rows.append(("swept", "; ".join(line.strip() for line in str(swept).splitlines()
                                        if line.strip())))
    print(path, file=out)
    for name, value in rows:
        print(f"  {name:<10} {value}", file=out)

    averaged = getattr(run, "averaged_over", 1)
    stored = (f"the means over {averaged} replicas of x, |x|, x^2, x^4 (output.observables = "
              f"means)" if averaged > 1 else f"{run.replicas} replica(s)")
    print(f"  observables: {len(run)} measurements x {stored} "
          f"(plain sample means, no error bars)", file=out)
    print(f"    {'name':<16} {'shape':>12} {'mean':>22} {'first sweep':>12} {'last sweep':>12}",
          file=out)
    first = str(run.sweep[0]) if len(run) else "-"
    last = str(run.sweep[-1]) if len(run) else "-"
    for name, series in run.observables.items():
        mean = f"{np.mean(series):.15g}" if series.size else "-"
        print(f"    {name:<16} {_dims(series.shape):>12} {mean:>22} {first:>12} {last:>12}",
              file=out)
    for name, h in run.histograms.items():
        if len(h):
            print(f"  histogram {name}: {len(h)} values in [{h.values[0]}, {h.values[-1]}], "
                  f"{h.samples} samples, mean {h.mean():.15g} (total, not per site)", file=out)
        else:
            print(f"  histogram {name}: empty", file=out)

    s = run.snapshots
    line = f"  snapshots: {s.count} frames of {_dims(s.frame_shape)}, shape {s.shape}, {s.dtype}"
    if s.components > 1:
        line += f" ({s.components} components on the last axis)"
    if s.count:
        line += f", sweeps {s.sweep[0]} .. {s.sweep[-1]}"
    print(line, file=out)
    for line in _correlator_lines(run):
        print(line, file=out)
    for w in run.warnings:
        print(f"  warning: {w}", file=out)


def _sweeps(sweep):
    return f", sweeps {sweep[0]} .. {sweep[-1]}" if len(sweep) else ""


def _correlator_lines(run):
    """info's lines for /correlators, none when the file has no correlator group."""
    sf, ts = run.structure_factor, run.timeslice
    if sf is None and ts is None:
        return []
    lines = ["  correlators:"]
    if sf is not None:
        every = f"every {sf.every} measurement(s), " if sf.every is not None else ""
        line = (f"    structure_factor: {every}series of {len(sf)} rows "
                f"(s0, s_min, xi2: {_dims(sf.series['s0'].shape)}){_sweeps(sf.sweep)}")
        lines.append(line)
        if sf.complete:
            xi2 = f"{sf.xi2:.6g}" if sf.xi2 is not None else "-"
            lines.append(f"      S {_dims(sf.spectrum_shape)} (half spectrum), G "
                         f"{_dims(sf.dims)}, {len(sf.radial_k)} radial shells, "
                         f"{sf.samples} samples, {sf.components} component(s), xi2 = {xi2} "
                         f"(from <S(0)>, <S(k_min)>, L = {sf.longest})")
        else:
            lines.append("      no S, G or xi2 tables: the run did not finish")
    if ts is not None:
        every = f"every {ts.every} measurement(s), " if ts.every is not None else ""
        per_axis = ts.momenta_per_axis
        axes = "n x R x T x n_p" if len(ts.stored_shape) == 4 else "n x T x n_p"
        shape = (len(ts),) + ts.stored_shape[1:]  # the committed rows
        lines.append(f"    timeslice: {every}{len(ts)} rows, C {_dims(shape)} ({axes})"
                     f"{_sweeps(ts.sweep)}")
        vectors = " ".join("(" + ", ".join(str(int(x)) for x in n) + ")" for n in ts.momenta)
        lines.append(f"      T = {ts.time_extent}, V_s = {ts.spatial_volume}, {ts.n_momenta} "
                     f"momenta" + (f" ({per_axis} per spatial axis)" if per_axis else "")
                     + f", integer vectors n (p = 2 pi n / L) by row: {vectors}")
    return lines


# --------------------------------------------------------------------------- helpers

READ_ERRORS = (OSError, lattica_file.SchemaError, KeyError, ValueError)


def _error(message):
    print(f"python3 -m analysis: {message}", file=sys.stderr)


def _expand(paths):
    """The data files behind paths (index files expanded); (files, ok)."""
    ok = True
    files = []
    for path in paths:
        try:
            files.extend(lattica_file.expand_paths([path], report=_error))
        except READ_ERRORS as e:
            _error(f"{path}: {e}")
            ok = False
    return files, ok


def _prepare_one(args, parser, command):
    """The one run args.file names, loaded and cut; (Prepared or None, ok)."""
    prepared, ok = _prepare([args.file], args.cut)
    if not prepared:
        return None, ok
    if len(prepared) > 1:
        parser.error(f"{command} takes one run (an index names several; pick one of its files)")
    return prepared[0], ok


def _prepare(paths, cut):
    """Loads and cuts every file; (list of Prepared, ok)."""
    from analysis import summary
    files, ok = _expand(paths)
    prepared = []
    for path in files:
        try:
            prepared.append(summary.prepare(lattica_file.load(path), cut))
        except READ_ERRORS as e:
            text = str(e)
            _error(text if text.startswith(path) else f"{path}: {text}")
            ok = False
    return prepared, ok


def _plain(value):
    """JSON-ready: numpy scalars and arrays as Python, non-finite numbers as null."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return _plain(value.tolist())
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _looks_like_input(path):
    """True for an HDF5 file or a sweep index: never overwrite those with a report."""
    if path.lower().endswith((".h5", ".hdf5")):
        return True
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    return head.startswith(b"\x89HDF") or b"lattica-index/1" in head


def _json_target(args, parser):
    target = getattr(args, "json", None)
    if target not in (None, "-") and _looks_like_input(target):
        parser.error(f"--json {target}: that is a data or index file, not a report path "
                     "(put --json after the files, or write --json=PATH)")
    return target


def _emit_json(document, target):
    text = json.dumps(_plain(document), indent=2, allow_nan=False) + "\n"
    if target == "-":
        sys.stdout.write(text)
    else:
        with open(target, "w", encoding="utf-8") as f:
            f.write(text)


# --------------------------------------------------------------------------- commands


def cmd_info(args, parser):
    files, status = _expand(args.files)
    status = 0 if status else 1
    for i, path in enumerate(files):
        try:
            report = io.StringIO()
            info(path, report)
        except READ_ERRORS as e:
            print(f"{path}: error: {e}", file=sys.stderr)
            status = 1
            continue
        print(("\n" if i else "") + report.getvalue(), end="")
    return status


def cmd_summary(args, parser):
    from analysis import summary
    target = _json_target(args, parser)
    prepared, ok = _prepare(args.files, args.cut)
    results = []
    for p in prepared:
        s = summary.summarize(p)
        results.append(s)
        if target != "-":
            print(("\n" if len(results) > 1 else "") + summary.format_summary(s))
    if target is not None:
        _emit_json({"schema": "lattica-summary/1", "cut_rule": summary.CUT_RULE,
                    "files": results}, target)
    return 0 if ok and prepared else 1


def cmd_reweight(args, parser):
    from analysis import crossing, reweight, summary
    target = _json_target(args, parser)
    p, ok = _prepare_one(args, parser, "reweight")
    if p is None:
        return 1
    if p.beta is None:  # phi4: the weight is exp(-S), there is no beta to move
        _error(f"{p.paths[0]}: reweight works in beta, and this {p.model} run has none (kappa = "
               f"{p.coupling!r}); reweighting in kappa is not implemented")
        return 2
    if reweight.means_refusal(p):
        _error(reweight.means_refusal(p))
        return 2
    rw, block_ok = reweight.reweighter_for(p)
    low, high = rw.reach()
    warnings = list(p.warnings)
    if not block_ok:
        warnings.append(f"too few measurements for jackknife blocks of 20 tau_int (tau_int "
                        f"{p.max_tau():.3g}, blocks of {rw.block_length}); errors may be "
                        f"underestimated")
    points = []
    for beta in args.beta:
        r = rw.evaluate(beta)
        point = {"beta": beta, "in_range": r["in_range"], "ess_fraction": r["ess_fraction"]}
        for name in reweight.QUANTITIES:
            point[name] = {"value": r[name][0], "error": r[name][1]}
        if not r["in_range"]:
            warnings.append(f"beta = {beta}: the reweighted mean energy {r['e'][0]:.6g} lies "
                            f"outside the central 95 % of the sampled energies "
                            f"[{rw.e_low:.6g}, {rw.e_high:.6g}]; not trustworthy")
        points.append(point)
    u4 = summary.derived_quantities(p.beta, p.volume, p.h, p.model, p.components)[0][3]
    document = {
        "schema": "lattica-reweight/1", "file": p.paths[0], "model": p.model,
        "parameters": p.parameters, "U4_definition": u4, "lattice_dims": list(p.dims),
        "volume": p.volume, "beta_simulated": p.beta, "h": p.h, "replicas": p.replicas,
        "cut": p.cut, "measurements_used": p.used, "tau_int_max": p.max_tau(),
        "block_length": rw.block_length, "blocks": len(rw.blocks),
        "reliable_range": [low, high], "sampled_energy_central_95": [rw.e_low, rw.e_high],
        "points": points, "warnings": warnings,
    }
    if target != "-":
        dims = "x".join(str(n) for n in p.dims)
        print(f"{p.paths[0]}: {crossing.model_label(p)}, lattice {dims}, simulated beta = "
              f"{p.beta!r}, h = {p.h!r}, {p.used} measurements after a cut of {p.cut}")
        if p.components > 1:
            print(f"  U4 = {u4}")
        print(f"  jackknife: {len(rw.blocks)} blocks of {rw.block_length} measurements "
              f"(largest tau_int {p.max_tau():.3g}); reliable range beta in "
              f"[{low:.6g}, {high:.6g}]")
        header = f"  {'beta':>10}"
        for name in reweight.QUANTITIES:
            header += f" {('<' + name + '>') if name in ('e', '|m|', 'm^2') else name:>24}"
        print(header + f" {'ESS':>6}")
        for point in points:
            row = f"  {point['beta']:>10.6g}"
            for name in reweight.QUANTITIES:
                row += f" {summary.format_value(point[name]['value'], point[name]['error']):>24}"
            row += f" {point['ess_fraction']:>6.3f}" + ("" if point["in_range"] else "  !")
            print(row)
        for w in warnings:
            print(f"  warning: {w}")
    if target is not None:
        _emit_json(document, target)
    return 0 if ok else 1


def cmd_crossing(args, parser):
    from analysis import crossing
    target = _json_target(args, parser)
    prepared, ok = _prepare(args.files, args.cut)
    refused = crossing.refusal(prepared)
    if refused:
        _error(f"crossing: {refused}")
        return 2
    pairs, warnings = crossing.crossings(prepared)
    for p in prepared:
        warnings.extend(f"{p.paths[0]}: {w}" for w in p.warnings)
    if target != "-":
        print(crossing.format_pairs(pairs, warnings))
    if target is not None:
        _emit_json({"schema": "lattica-crossing/1", "pairs": pairs, "warnings": warnings},
                   target)
    return 0 if ok and prepared else 1


def _momentum_indices(value, ts):
    """The momentum rows --momentum asks for, or an error message."""
    if value.strip().lower() == "all":
        return list(range(ts.n_momenta)), None
    try:
        index = int(value)
    except ValueError:
        return None, f"--momentum {value!r}: expected an integer row or 'all'"
    if not 0 <= index < ts.n_momenta:
        return None, (f"--momentum {index}: the file has {ts.n_momenta} momenta "
                      f"(rows 0 .. {ts.n_momenta - 1})")
    return [index], None


def _number(value, error):
    """'value ± error' (two significant digits of the error), '-' for a missing value."""
    from analysis import summary
    if value is None or not math.isfinite(value):
        return "-"
    if error is None or not math.isfinite(error):
        return f"{value:.6g} ± ?"
    return summary.format_value(value, error)


def format_effmass(document):
    """The effmass table of an effmass JSON-like document."""
    d = document
    dims = "x".join(str(n) for n in d["lattice_dims"])
    extent = d["T"]
    described = ", ".join(f"{k} = {v!r}" for k, v in d["parameters"].items() if v is not None)
    lines = [f"{d['file']}: {d['model']} {dims}, {described}",
             f"  /correlators/timeslice: T = {extent} (last axis), V_s = {d['spatial_volume']}, "
             f"{d['measurements']} rows x {d['replicas']} replica(s); cut {d['cut']} observable "
             f"measurements" + (f" (from sweep {d['first_sweep']})" if d["first_sweep"] else "")
             + f", {d['measurements_used']} rows used per replica"]
    for m in d["momenta"]:
        label = correlators.momentum_label(np.array(m["n"]), np.array(m["p"]))
        lines.append("")
        if m["measures"] == "m":
            lines.append(f"  momentum {m['index']}: {label}: m_eff measures the mass m")
        else:
            lines.append(f"  momentum {m['index']}: {label}: m_eff measures E(p), the energy of "
                         f"the lowest state of momentum p")
            lines.append(f"    (p^2 = {m['p_squared']:.6g}; a free lattice boson has sinh^2(E/2) "
                         f"= sinh^2(m/2) + sum_a sin^2(p_a/2))")
        tau = _number(m["tau_int_C1"], m["tau_int_C1_error"])
        lines.append(f"  jackknife: {m['blocks']} blocks of {m['block_length']} measurements; "
                     f"tau_int(C(dt=1)) = {tau} measurements")
        lines.append(f"  {'dt':>4} {'C(dt)':>30} {'m_eff(dt)':>26}")
        for dt in range(extent // 2 + 1):
            lines.append(f"  {dt:>4} {_number(m['C'][dt], m['C_error'][dt]):>30} "
                         f"{_number(m['m_eff'][dt], m['m_eff_error'][dt]):>26}")
    lines.append("")
    lines.append("  C(dt) = C(T - dt): rows dt > T/2 mirror these (--json has all dt); m_eff "
                 "solves C(dt)/C(dt+1) = cosh(m (dt - T/2)) / cosh(m (dt + 1 - T/2)), '-' "
                 "where no m >= 0 does, '± ?' where a jackknife sample has none")
    for w in d["warnings"]:
        lines.append(f"  warning: {w}")
    return "\n".join(lines)


def cmd_effmass(args, parser):
    from analysis import summary
    target = _json_target(args, parser)
    p, ok = _prepare_one(args, parser, "effmass")
    if p is None:
        return 1
    run = p.run
    ts = run.timeslice
    if ts is None:
        _error(f"{p.paths[0]}: no /correlators/timeslice group (run with measure.timeslice = "
               f"true)")
        return 2
    indices, problem = _momentum_indices(args.momentum, ts)
    if problem:
        _error(f"{p.paths[0]}: {problem}")
        return 2
    first_sweep = correlators.cut_sweep(run, p.cut)
    try:
        results = correlators.effective_mass_all(ts, first_sweep, indices)
    except (OSError, KeyError, ValueError) as e:
        _error(f"{p.paths[0]}: {e}")
        return 1
    warnings = list(p.warnings)
    for r in results:
        if not r.blocks_ok:
            warnings.append(f"momentum {r.index}: too few measurements for jackknife blocks of "
                            f"20 tau_int (tau_int {r.tau_int.tau_int:.3g}, blocks of "
                            f"{r.block_length}); errors may be underestimated")
    used = len(ts) - correlators.first_kept_row(ts.sweep, first_sweep)
    document = {
        "schema": "lattica-effmass/1", "file": p.paths[0], "model": p.model,
        "parameters": p.parameters, "lattice_dims": list(p.dims), "T": ts.time_extent,
        "spatial_volume": ts.spatial_volume, "replicas": ts.replicas, "every": ts.every,
        "momenta_per_axis": ts.momenta_per_axis, "measurements": len(ts),
        "cut": p.cut, "cut_rule": summary.CUT_RULE if p.auto_cut else "given (--cut)",
        "first_sweep": first_sweep, "measurements_used": used,
        "errors": correlators.BLOCK_RULE,
        "m_eff_definition": "C(dt)/C(dt+1) = cosh(m (dt - T/2)) / cosh(m (dt + 1 - T/2))",
        "momenta": [r.as_dict() for r in results], "warnings": warnings,
    }
    if target != "-":
        print(format_effmass(document))
    if target is not None:
        _emit_json(document, target)
    return 0 if ok else 1


def cmd_plot(args, parser):
    from analysis import plots, summary
    prepared, ok = _prepare(args.files, args.cut)
    summaries = [summary.summarize(p) for p in prepared]
    for path in plots.plot_all(prepared, summaries, args.out, report=_error):
        print(path)
    return 0 if ok and prepared else 1


def _rate_options(values, option):
    """KEY=VALUE options as a list of (key, rate) pairs, or the error message."""
    from analysis import dynamics
    pairs = []
    for text in values or []:
        try:
            pairs.append(dynamics.parse_rate_option(text))
        except ValueError as e:
            return None, str(e).replace("--rate", option, 1)
    return pairs, None


def cmd_dynamics(args, parser):
    from analysis import dynamics
    target = _json_target(args, parser)
    if args.extrapolate <= 0:
        parser.error("--extrapolate must be a positive size")
    if args.plot is not None and _looks_like_input(args.plot):
        parser.error(f"--plot {args.plot}: that is a data or index file, not a figure path")
    rate_options, problem = _rate_options(args.rate, "--rate")
    extrapolation, problem2 = _rate_options(args.extrapolation_rate, "--extrapolation-rate")
    if problem or problem2:
        parser.error(problem or problem2)
    side = {}
    if args.rates is not None:
        try:
            side = dynamics.read_rates(args.rates)
        except (OSError, ValueError, TypeError, KeyError) as e:
            _error(f"--rates {args.rates}: {e}")
            return 2
    fit_sizes = (None, None)
    if args.fit_sizes is not None:
        try:
            fit_sizes = dynamics.parse_fit_sizes(args.fit_sizes)
        except ValueError as e:
            parser.error(str(e))
    documents = [f for f in args.files if f.endswith(".json")]
    runs, ok = [], True
    for path in documents:
        try:
            runs.extend(dynamics.read_document(path))
        except (OSError, ValueError) as e:
            _error(f"{path}: {e}" if not str(e).startswith(path) else str(e))
            ok = False
    prepared, prepared_ok = ([], True)
    others = [f for f in args.files if not f.endswith(".json")]
    if others:
        prepared, prepared_ok = _prepare(others, args.cut)
    ok = ok and prepared_ok
    for p in prepared:
        label = dynamics.run_algorithm(p.run)[3]
        dims = list(p.dims)
        size = dims[0] if len(set(dims)) == 1 else None
        rate, source = dynamics.find_rate(p.paths[0], label, size, rate_options, side)
        runs.append(dynamics.analyse_run(p, rate, source))
    if not runs:
        return 1
    document = dynamics.analyse(runs, args.extrapolate, args.reference, dict(extrapolation),
                                fit_sizes)
    if target != "-":
        print(dynamics.format_dynamics(document))
    if args.plot is not None:
        path = dynamics.plot(document, args.plot)
        if target != "-":
            print(f"plot: {path}")
    if target is not None:
        _emit_json(document, target)
    return 0 if ok else 1


def _program_name():
    """How the user called us, for usage lines: the installed command or the module."""
    command = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    return command if command == "lattica-analysis" else "python3 -m analysis"


TEMPERING_DESCRIPTION = """\
For a parallel-tempering run: every rung's couplings and its observables (mean and
Gamma-method error, the ladders combined as replicas), the exchange acceptance of each pair of
rungs, the round trips (bottom rung to the top and back: count, mean length in sweeps) and the
up-going fraction f(k) per rung. With --reweight X [X ...]: MBAR (multiple-histogram
reweighting without bins) over every rung's samples to those values of the tempered coupling,
with jackknife errors over 20 blocks of measurements, and the rungs' free energies
f_k = -ln(Z_k / Z_0). For a ladder of one coupling it also gives one step of the feedback
optimisation of Katzgraber, Trebst, Huse and Troyer (2006): the ladder with the same ends and
rung density sqrt(|df/dc| / dc), to run next."""


def cmd_tempering(args, parser):
    from analysis import tempering
    target = _json_target(args, parser)
    files, ok = _expand(args.files)
    documents = []
    for path in files:
        try:
            t = tempering.read_tempering(path)
            if t is None:
                _error(f"{path}: not a parallel-tempering run (no /tempering)")
                return 2
            run = lattica_file.load(path)
            cut = args.cut if args.cut is not None else tempering.automatic_cut(run, t)
            doc = {"file": path, "cut": cut, "rungs": tempering.rung_summaries(run, t, cut),
                   "exchange": tempering.exchange_statistics(t)}
            if args.reweight:
                doc["reweight"] = tempering.reweight(run, t, args.reweight, cut)
            documents.append(doc)
            if target != "-":
                print(tempering.format_report(path, doc["rungs"], doc["exchange"],
                                              doc.get("reweight")))
        except ValueError as e:
            _error(f"{path}: {e}")
            return 2
        except READ_ERRORS as e:
            _error(f"{path}: {e}")
            ok = False
    if target is not None:
        _emit_json({"schema": "lattica-tempering/1", "files": documents}, target)
    return 0 if ok and documents else 1


MULTICANONICAL_DESCRIPTION = """\
For a multicanonical run ([multicanonical]): ln g(E) = ln H(E) - ln W(E) from the production
histogram and the frozen weights, normalised by the ground state's degeneracy (2 for Ising,
q for Potts; sum g = q^V when the ground state was never reached), with jackknife errors over
--blocks blocks of walkers (default 20). Reweighted to each --beta (default: model.beta):
e, C = beta^2 V (<e^2> - <e>^2) and f = -ln Z / (beta V) per site from ln g, and the Binder
cumulant U4 = 1 - <m^4>/(3 <m^2>^2) from the walkers' time series (Ising m = M/V, Potts
m = (q n_max/V - 1)/(q - 1)). With --first-order: the beta near --beta (or model.beta) where
P(E) has two peaks of equal height, the peaks' energies per site, the latent heat and the
interface tension ln(P_max/P_min) / (2 L^(d-1)); --json adds ln P(E) there ("log_p", one
value per entry of "energy").

O(n) and phi^4 runs have binned energies ("energy": the bins' centres): ln g per bin is
relative to the window's lowest bin and there is no f. --beta gives the coupling conjugate
to E: beta for O(n) (E = -sum s_i.s_j), kappa for phi^4 (E = -2 sum phi_x phi_y); e, C and
U4 come from the time series reweighted by exp(-coupling E - ln W(E)) at the samples' own
energies (C = coupling^2 V (<e^2> - <e>^2); O(n) U4 = (n+2)/2 (1 - n/(n+2) <m^4>/<m^2>^2)
with m = |M|/V, phi^4 U4 = 1 - <m^4>/(3 <m^2>^2) with m = M/V); --first-order uses ln P over
the bins' centres. --json: "coupling" names the coupling that the "beta" fields hold."""


def cmd_multicanonical(args, parser):
    from analysis import multicanonical
    target = _json_target(args, parser)
    try:
        run = multicanonical.read(args.file)
        betas = args.beta if args.beta else [run.beta]
        lng, lng_error = multicanonical.log_g(run, args.blocks)
        rows = multicanonical.reweight(run, betas, args.blocks)
        transition = (multicanonical.first_order(run, betas[0], args.blocks)
                      if args.first_order else None)
    except ValueError as e:
        _error(f"{args.file}: {e}")
        return 2
    except READ_ERRORS as e:
        _error(f"{args.file}: {e}")
        return 1
    if args.first_order and transition is None:
        _error(f"{args.file}: P(E) has no second peak near {run.coupling} = {betas[0]}")
    if target != "-":
        print(multicanonical.format_report(run, lng, lng_error, rows, transition))
    if target is not None:
        finite = np.isfinite(lng) & np.isfinite(run.energy)
        if transition is not None:  # ln P(E) at the equal-height beta, normalised to sum 1
            log_p = lng[finite] - transition["beta"] * run.energy[finite]
            top = log_p.max()
            transition["log_p"] = (log_p - top - np.log(np.exp(log_p - top).sum())).tolist()
        energy = (run.energy[finite].tolist() if run.binned  # Ising, Potts: exact integers
                  else run.energy[finite].astype(np.int64).tolist())
        document = {"schema": "lattica-multicanonical/1", "file": args.file,
                    "model": run.model, "coupling": run.coupling,
                    "coupling_value": run.beta, "binned": run.binned,
                    "refine_iterations": multicanonical.refinement(run)[0],
                    "refine_sweeps": multicanonical.refinement(run)[1]}
        if run.model == "potts":
            document["q"] = run.q
        if run.model == "on":
            document["n"] = run.n
        if run.binned:
            document["bin_low"], document["bin_width"] = run.bin_low, run.bin_width
        document.update({"energy": energy, "log_g": lng[finite].tolist(),
                         "log_g_error": lng_error[finite].tolist(), "reweight": rows,
                         "first_order": transition})
        _emit_json(document, target)
    return 0
ANNEALING_DESCRIPTION = """\
Reads /annealing of population annealing runs ([annealing]) of one schedule and prints, per
step of the schedule: beta, beta F per site (the mean over every independent population of
every file) with its standard error over those populations (NaN for a single one: set
annealing.populations >= 2 or give several files of different seeds), the population means of
e, |m| and m^2 with errors sigma sqrt(rho_t / R) (R / rho_t effectively independent
replicas), the families left, rho_t and the effective population fraction of the step's
weights. annealing.py has the details."""


def cmd_annealing(args, parser):
    from analysis import annealing
    target = _json_target(args, parser)
    files, ok = _expand(args.files)
    runs = []
    for path in files:
        try:
            run = annealing.read_annealing(path)
        except READ_ERRORS as e:
            _error(f"{path}: {e}")
            ok = False
            continue
        if run is None:
            _error(f"{path}: not a population annealing run (no /annealing)")
            return 2
        runs.append(run)
    if not runs:
        return 1
    try:
        rows = annealing.step_table(runs)
    except ValueError as e:
        _error(str(e))
        return 2
    if target != "-":
        print(annealing.format_table([r.path for r in runs], runs, rows))
    if args.plot:
        annealing.plot(rows, args.plot)
    if target is not None:
        _emit_json({"schema": "lattica-annealing/1", "files": [r.path for r in runs],
                    "steps": rows}, target)
    return 0 if ok else 1


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog=_program_name(), description="Analyses Lattica output files.",
        epilog="FILE: a sim output file (.h5) or a sweep index (.json) standing for its "
               "points' files. 'python3 -m analysis COMMAND --help' describes each command.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(name, help_text, description):
        return commands.add_parser(name, help=help_text, description=description,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)

    p = add("info", "metadata, series lengths and plain sample means", INFO_DESCRIPTION)
    p.add_argument("files", nargs="+", metavar="FILE")
    p.set_defaults(handler=cmd_info)

    p = add("summary", "means, Gamma-method errors, tau_int, U4, chi, C", SUMMARY_DESCRIPTION)
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--cut", type=int, metavar="N", help=CUT_HELP)
    p.add_argument("--json", nargs="?", const="-", metavar="PATH", help=JSON_HELP)
    p.set_defaults(handler=cmd_summary)

    p = add("reweight", "single-histogram reweighting to other couplings", REWEIGHT_DESCRIPTION)
    p.add_argument("file", metavar="FILE")
    p.add_argument("--beta", type=float, nargs="+", required=True, metavar="B",
                   help="target couplings")
    p.add_argument("--cut", type=int, metavar="N", help=CUT_HELP)
    p.add_argument("--json", nargs="?", const="-", metavar="PATH", help=JSON_HELP)
    p.set_defaults(handler=cmd_reweight)

    p = add("crossing", "Binder-cumulant crossings between lattice sizes", CROSSING_DESCRIPTION)
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--cut", type=int, metavar="N", help=CUT_HELP)
    p.add_argument("--json", nargs="?", const="-", metavar="PATH", help=JSON_HELP)
    p.set_defaults(handler=cmd_crossing)

    p = add("effmass", "time-slice correlators and cosh effective masses",
            EFFMASS_DESCRIPTION)
    p.add_argument("file", metavar="FILE")
    p.add_argument("--momentum", default="0", metavar="INDEX", help=MOMENTUM_HELP)
    p.add_argument("--cut", type=int, metavar="N", help=CUT_HELP)
    p.add_argument("--json", nargs="?", const="-", metavar="PATH", help=JSON_HELP)
    p.set_defaults(handler=cmd_effmass)

    p = add("plot", "PNG figures of series, histograms, autocorrelations, sweeps",
            PLOT_DESCRIPTION)
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--out", default=".", metavar="DIR",
                   help="directory for the figures (created; default: the current directory)")
    p.add_argument("--cut", type=int, metavar="N", help=CUT_HELP)
    p.set_defaults(handler=cmd_plot)

    p = add("tempering", "parallel tempering: per-rung summaries, round trips, MBAR",
            TEMPERING_DESCRIPTION)
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--reweight", type=float, nargs="+", metavar="X",
                   help="values of the tempered coupling to reweight to (MBAR)")
    p.add_argument("--cut", type=int, metavar="N", help=CUT_HELP)
    p.add_argument("--json", nargs="?", const="-", metavar="PATH", help=JSON_HELP)
    p.set_defaults(handler=cmd_tempering)

    p = add("multicanonical", "ln g(E), reweighting and interface tension of a multicanonical "
            "run", MULTICANONICAL_DESCRIPTION)
    p.add_argument("file", metavar="FILE")
    p.add_argument("--beta", type=float, nargs="+", metavar="B",
                   help="couplings to reweight to: beta, or kappa for a phi^4 run (default: "
                        "the run's own)")
    p.add_argument("--first-order", action="store_true",
                   help="find the equal-height beta (kappa for phi^4), the peak energies and "
                        "the interface tension")
    p.add_argument("--blocks", type=int, default=20, metavar="N",
                   help="jackknife blocks of walkers (default 20)")
    p.add_argument("--json", nargs="?", const="-", metavar="PATH", help=JSON_HELP)
    p.set_defaults(handler=cmd_multicanonical)
    p = add("annealing", "population annealing: free energy, <e>, families, rho_t per step",
            ANNEALING_DESCRIPTION)
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--json", nargs="?", const="-", metavar="PATH", help=JSON_HELP)
    p.add_argument("--plot", metavar="PNG", help="write beta F, <e> and rho_t against beta")
    p.set_defaults(handler=cmd_annealing)

    p = add("dynamics", "tau_int across sizes and algorithms, dynamic exponents, samples/s",
            DYNAMICS_DESCRIPTION)
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--rates", metavar="JSON",
                   help="side file of the runs' rates in site updates/ns")
    p.add_argument("--rate", action="append", metavar="KEY=VALUE",
                   help="a rate in site updates/ns for a file, a size L or LABEL:L "
                        "(repeatable; before --rates)")
    p.add_argument("--extrapolate", type=int, default=4096, metavar="L",
                   help="lattice size for the extrapolated samples per second (default 4096)")
    p.add_argument("--extrapolation-rate", action="append", metavar="LABEL=VALUE",
                   help="an algorithm's rate at the extrapolated size (default: the rate of "
                        "its largest size; repeatable)")
    p.add_argument("--reference", default="metropolis", metavar="NAME",
                   help="the algorithm gains are measured against (default metropolis)")
    p.add_argument("--fit-sizes", metavar="MIN:MAX",
                   help="fit only the sizes MIN <= L <= MAX (either may be left out: 64:)")
    p.add_argument("--cut", type=int, metavar="N", help=CUT_HELP)
    p.add_argument("--json", nargs="?", const="-", metavar="PATH", help=JSON_HELP)
    p.add_argument("--plot", metavar="PNG", help="write tau_int against L (log-log) with the "
                                                 "fits to this PNG file")
    p.set_defaults(handler=cmd_dynamics)

    args = parser.parse_args(argv)
    if getattr(args, "cut", None) is not None and args.cut < 0:
        parser.error("--cut must be >= 0")
    return args.handler(args, parser)


def run():
    """The command's entry point (`python3 -m analysis`, the installed `lattica-analysis`):
    main() on sys.argv, its exit status returned."""
    try:
        return main()
    except BrokenPipeError:  # e.g. piped into head: stop quietly
        sys.stderr.close()
        return 1


if __name__ == "__main__":
    sys.exit(run())

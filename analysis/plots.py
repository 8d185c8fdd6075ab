"""PNG figures (the `plot` command), drawn with matplotlib's Agg backend.

Per run `<stem>` (e and m as in summary.py: for O(n) m is |m|, for phi4 e is the action
density S/V and m = phi):
    <stem>.series.png    e and m against the sweep, every replica, thermalisation cut marked
    <stem>.hist.png      histograms of e and m: the exact ones from /histograms when the file
                         has them (Ising/Potts: all measurements, total values divided by V;
                         the energy one is the interaction part E_J), otherwise from the
                         analysed series (100 bins for the continuous models)
    <stem>.autocorr.png  normalised autocorrelation rho(t) of e and m^2 (Gamma method, with
                         its error band) and the chosen window W
    <stem>.structure.png (with /correlators/structure_factor tables) the radially binned
                         S(|k|) on a log scale, and G(r), G_connected(r) along axis 0
    <stem>.timeslice.png (with /correlators/timeslice) C(dt) per momentum on a log scale over
                         the whole period (gaps where C <= 0) and the cosh effective mass
                         m_eff(dt), dt < T/2, with blocked-jackknife errors (correlators.py,
                         after the run's cut; the y range follows the well-determined points)
Across runs of one model, when they span at least two couplings (beta; kappa for phi4):
    vs_beta.png          U4, chi, C and <|m|> against beta with Gamma-method errors, one colour
                         per lattice size, with the single-histogram reweighted curve of each
                         size (from the nearest simulated point) drawn between its points
    vs_kappa.png         phi4: U4, chi, <phi2> and <|m|> against kappa, points only (no beta,
                         so no reweighting)
"""

import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from analysis import correlators, crossing, reweight, summary  # noqa: E402

MAX_POINTS = 20000  # per line in a time series; longer series are thinned for drawing


def _stem(path, taken):
    stem = os.path.basename(path)
    for suffix in (".h5", ".hdf5"):
        if stem.endswith(suffix):
            stem = stem[:-len(suffix)]
    name, k = stem, 2
    while name in taken:
        name = f"{stem}-{k}"
        k += 1
    taken.add(name)
    return name


def _save(figure, title, path):
    """Titles (unless title is None), lays out, writes and closes a figure."""
    if title is not None:
        figure.suptitle(title)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def _title(p):
    dims = "x".join(str(n) for n in p.dims)
    described = ", ".join(f"{k} = {v:g}" for k, v in p.parameters.items() if v is not None)
    return f"{os.path.basename(p.paths[0])}: {p.model} {dims}, {described}"


def _labels(p):
    """Axis labels of e and m for the model."""
    if p.model == "phi4":
        return "S / V", "m = phi"
    return "e", ("|m|" if p.model == "on" else "m")


def time_series(p, path):
    run = p.run
    sweep = run.sweep
    figure, axes = plt.subplots(2, 1, figsize=(9, 6), sharex=True)
    stride = max(1, len(sweep) // MAX_POINTS)
    chains = summary.chain_names(p.model)
    for ax, name, label in zip(axes, chains, _labels(p)):
        data = run.chains[name]
        for r in range(min(data.shape[1], 8)):
            ax.plot(sweep[::stride], data[::stride, r], lw=0.5, alpha=0.8,
                    label=f"replica {r}" if data.shape[1] > 1 else None)
        if p.cut > 0:
            ax.axvline(sweep[p.cut], color="k", ls="--", lw=1, label=f"cut ({p.cut} meas.)")
        ax.set_ylabel(label)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(loc="best", fontsize="small")
    axes[1].set_xlabel("sweep")
    axes[0].set_title(_title(p))
    _save(figure, None, path)


def _bars(ax, values, counts, label):
    """A probability histogram of discrete values: one bar per value when there are few,
    otherwise bins that are whole multiples of the value spacing (no aliasing stripes)."""
    values = np.asarray(values, dtype=np.float64)
    probability = np.asarray(counts, dtype=np.float64) / np.sum(counts)
    if len(values) <= 200:
        width = np.min(np.diff(values)) * 0.8 if len(values) > 1 else 1.0
        ax.bar(values, probability, width=width, label=label)
    else:
        spacing = float(np.min(np.diff(values)))
        per_bin = int(np.ceil((values[-1] - values[0]) / spacing / 100.0))
        width = per_bin * spacing
        edges = values[0] - 0.5 * spacing + width * np.arange(
            int(np.ceil((values[-1] - values[0] + spacing) / width)) + 1)
        ax.hist(values, bins=edges, weights=probability, histtype="stepfilled", alpha=0.7,
                label=f"{label} ({per_bin} values per bin)")
    ax.set_ylabel("probability")


def histograms(p, path):
    run = p.run
    figure, axes = plt.subplots(1, 2, figsize=(11, 4))
    volume = p.volume
    e_label, m_label = _labels(p)
    for ax, name, series, label in ((axes[0], "energy", p.e, e_label),
                                    (axes[1], "magnetization", p.m, m_label)):
        h = run.histograms.get(name)
        if p.model in ("on", "phi4"):  # continuous values: no lattice of values to bin on
            values = np.concatenate(series)
            ax.hist(values, bins=100, weights=np.full(len(values), 1.0 / len(values)),
                    histtype="stepfilled", alpha=0.7,
                    label=f"analysed series, {len(values)} samples")
            ax.set_ylabel("probability")
            ax.set_xlabel(label)
        elif h is not None:
            what = "E_J / V" if name == "energy" else "M / V"
            _bars(ax, h.values / volume, h.counts, f"exact histogram, all {h.samples} samples")
            ax.set_xlabel(what)
        else:
            values, counts = np.unique(np.concatenate(series), return_counts=True)
            _bars(ax, values, counts, f"analysed series, {int(counts.sum())} samples")
            ax.set_xlabel(label)
        ax.legend(loc="best", fontsize="small")
    _save(figure, _title(p), path)


def autocorrelation(p, path):
    figure, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, name in ((axes[0], p.energy_name), (axes[1], "m^2")):
        g = p.gamma(name)
        t = np.arange(len(g.rho))
        ax.plot(t, g.rho, "o-", ms=2, lw=1, label=f"rho({name})")
        ax.fill_between(t, g.rho - g.rho_error, g.rho + g.rho_error, alpha=0.3)
        ax.axvline(g.window, color="r", ls="--",
                   label=f"W = {g.window}, tau_int = {g.tau_int:.3g} ± {g.tau_int_error:.2g}")
        ax.axhline(0.0, color="k", lw=0.5)
        ax.set_xlabel("lag t (measurements)")
        ax.set_ylabel("normalised autocorrelation")
        ax.legend(loc="best", fontsize="small")
    _save(figure, _title(p), path)


def structure(p, path):
    """The radially binned S(|k|) and G(r) along axis 0 of the run's structure factor (S only,
    where the run kept only the radial tables)."""
    sf = p.run.structure_factor
    figure, axes = plt.subplots(1, 2 if sf.per_mode else 1, figsize=(11 if sf.per_mode else 6, 4),
                                squeeze=False)
    axes = axes[0]
    k, s = sf.radial_k, sf.radial_S
    positive = s > 0  # a log scale: non-positive shells (connected parts, noise) left out
    ax = axes[0]
    ax.plot(k[positive], s[positive], "o-", ms=3, lw=1, label="<S> over each shell")
    ax.set_yscale("log")
    ax.set_xlabel("|k| (shells of width 2 pi / L_max)")
    ax.set_ylabel("S(|k|)")
    xi2 = sf.xi2
    title = f"{sf.samples} samples" + (f", xi2 = {xi2:.4g}" if xi2 is not None and
                                       np.isfinite(xi2) else "")
    ax.set_title(title, fontsize="small")
    ax.grid(alpha=0.3, which="both")
    ax.legend(loc="best", fontsize="small")
    if not sf.per_mode:
        _save(figure, _title(p), path)
        return
    ax = axes[1]
    axis0 = (slice(None),) + (0,) * (len(sf.dims) - 1)
    r = np.arange(sf.dims[0])
    ax.plot(r, sf.G[axis0], "o-", ms=3, lw=1, label="G(r)")
    ax.plot(r, sf.G_connected[axis0], "s--", ms=3, lw=1, label="G_connected(r)")
    ax.axhline(0.0, color="k", lw=0.5)
    ax.set_xlabel("r along axis 0 (periodic)")
    ax.set_ylabel("G(r e_0)")
    ax.grid(alpha=0.3)
    ax.legend(loc="best", fontsize="small")
    _save(figure, _title(p), path)


def timeslice(p, path):
    """C(dt) per momentum (log scale) and m_eff(dt) with jackknife errors."""
    ts = p.run.timeslice
    results = correlators.effective_mass_all(ts, correlators.cut_sweep(p.run, p.cut))
    figure, axes = plt.subplots(1, 2, figsize=(11, 4))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    extent = ts.time_extent
    dt = np.arange(extent + 1)
    independent = np.arange(extent // 2)  # dt >= T/2 mirror these: C(dt) = C(T - dt)
    well_determined = []
    for i, r in enumerate(results):
        colour = colours[i % len(colours)]
        label = f"{r.index}: " + correlators.momentum_label(r.n, r.p)
        c = np.append(r.c, r.c[0])  # C(T) = C(0): show the whole period
        e = np.append(r.c_error, r.c_error[0])
        c = np.where(c > 0, c, np.nan)  # a log scale: gaps where C <= 0
        axes[0].errorbar(dt, c, yerr=np.where(np.isfinite(e), e, 0.0), fmt="o-", ms=3, lw=1,
                         capsize=2, color=colour, label=label)
        m, err = r.m_eff[independent], r.m_eff_error[independent]
        finite = np.isfinite(m)
        shift = 0.15 * (i - 0.5 * (len(results) - 1)) / max(len(results), 1)
        axes[1].errorbar(independent[finite] + shift, m[finite],
                         yerr=np.where(np.isfinite(err), err, 0.0)[finite], fmt="o", ms=3,
                         capsize=2, color=colour,
                         label=("m" if r.zero_momentum else "E(p)") + f", {label}")
        good = finite & np.isfinite(err) & (err < 0.5 * np.abs(m))
        well_determined.extend((m + err)[good])
    if well_determined:  # noisy points with huge errors would set the scale otherwise
        axes[1].set_ylim(0.0, 1.3 * max(well_determined))
    axes[0].set_yscale("log")
    axes[0].set_xlabel("dt")
    axes[0].set_ylabel("C(dt, p)")
    axes[0].set_title(f"T = {extent}, {len(ts)} measurements x {ts.replicas} replica(s)",
                      fontsize="small")
    axes[1].set_xlabel("dt (up to T/2; beyond it mirrors)")
    axes[1].set_ylabel("cosh effective mass m_eff(dt)")
    axes[1].set_title("C(dt)/C(dt+1) = cosh(m (dt - T/2)) / cosh(m (dt+1 - T/2))",
                      fontsize="small")
    for ax in axes:
        ax.grid(alpha=0.3, which="both")
        ax.legend(loc="best", fontsize="x-small")
    _save(figure, _title(p), path)


def versus_coupling(summaries, prepared, path):
    """U4, chi, C (phi4: <phi2>) and <|m|> against the coupling (beta; kappa for phi4) per
    lattice size; summaries and prepared in step, all of one model."""
    phi4 = prepared[0].model == "phi4"
    third = ("phi2", "observables", "<phi2>") if phi4 else ("C", "derived", "C")
    panels = (("U4", "derived", "U4"), ("chi", "derived", "chi"), third,
              ("|m|", "observables", "<|m|>"))
    coupling = prepared[0].coupling_name
    figure, axes = plt.subplots(2, 2, figsize=(11, 8), sharex=True)
    sizes = crossing.group_by_size(prepared)
    order = sorted(sizes, key=lambda d: (int(np.prod(d)), d))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for c, dims in enumerate(order):
        colour = colours[c % len(colours)]
        label = f"L = {crossing.size_label(dims)}"
        rows = [(s, p) for s, p in zip(summaries, prepared) if p.dims == dims]
        rows.sort(key=lambda sp: sp[1].coupling)
        for ax, (name, group, _) in zip(axes.flat, panels):
            xs = [p.coupling for s, p in rows if name in s[group]]
            key = "mean" if group == "observables" else "value"
            ys = [s[group][name][key] for s, p in rows if name in s[group]]
            es = [s[group][name]["error"] for s, p in rows if name in s[group]]
            ax.errorbar(xs, ys, yerr=es, fmt="o", color=colour, ms=4, capsize=2, label=label)
        points = sorted(sizes[dims], key=lambda p: p.coupling)
        # Reweighting needs beta: none for phi4.
        if not phi4 and len(points) >= 2 and all(p.h == points[0].h for p in points):
            _reweighted_curve(axes, panels, points, colour)
    for ax, (_, _, title) in zip(axes.flat, panels):
        ax.set_ylabel(title)
        ax.grid(alpha=0.3)
    for ax in axes[1]:
        ax.set_xlabel(coupling)
    axes[0][0].legend(loc="best", fontsize="small")
    _save(figure, None, path)


def _reweighted_curve(axes, panels, points, colour):
    """Each point's reweighted curve over the half-way intervals to its neighbours."""
    reweighters = [reweight.reweighter_for(p)[0] for p in points]
    betas = np.array([p.beta for p in points])
    middles = 0.5 * (betas[1:] + betas[:-1])
    edges = np.concatenate([[betas[0]], middles, [betas[-1]]])
    for k, rw in enumerate(reweighters):
        grid = np.linspace(edges[k], edges[k + 1], 60)
        values = [rw.quantities(rw.sums(b, jackknife=False)[0], b) for b in grid]
        for ax, (name, _, _) in zip(axes.flat, panels):
            ax.plot(grid, [float(q[name]) for q in values], "-", color=colour, lw=1,
                    alpha=0.7)


def plot_all(prepared, summaries, out_dir, report=None):
    """Writes every figure; returns the paths written. report(message) hears why the figure
    across runs was left out, when it was."""
    os.makedirs(out_dir, exist_ok=True)
    written = []
    taken = set()
    for p in prepared:
        stem = _stem(p.paths[0], taken)
        for suffix, draw in ((".series.png", time_series), (".hist.png", histograms),
                             (".autocorr.png", autocorrelation)):
            path = os.path.join(out_dir, stem + suffix)
            draw(p, path)
            written.append(path)
        run = p.run
        if run is not None and run.structure_factor is not None and run.structure_factor.complete:
            path = os.path.join(out_dir, stem + ".structure.png")
            structure(p, path)
            written.append(path)
        if run is not None and run.timeslice is not None:
            path = os.path.join(out_dir, stem + ".timeslice.png")
            try:
                timeslice(p, path)
                written.append(path)
            except ValueError as e:  # too few measurements after the cut
                if report is not None:
                    report(f"{p.paths[0]}: no {os.path.basename(path)}: {e}")
    if len({p.coupling for p in prepared}) >= 2:
        models = sorted({crossing.model_label(p) for p in prepared})
        if len(models) > 1:
            if report is not None:
                report(f"no figure across runs: they are of different models "
                       f"({', '.join(models)})")
        else:
            path = os.path.join(out_dir, f"vs_{prepared[0].coupling_name}.png")
            versus_coupling(summaries, prepared, path)
            written.append(path)
    return written

"""Independent references for the certified ε(δ) intervals of the audit (the certified_intervals check).

Every ε(δ) answer of :func:`dpsampling.audit` is an interval [lower, upper] (an exact answer has lower = upper).
A reference is the same quantity computed by a method that shares no code with the one that gave the interval,
and :func:`agrees` says whether the interval is consistent with it:

* ``point`` (an exact value): the interval contains it;
* ``interval`` (two certified ends of another method): the two intervals overlap (both contain the true ε, so
  disjoint intervals prove that one of them is wrong);
* ``lower end`` (the same lower bound recomputed): the interval's lower end equals it;
* ``upper bound`` (another method's upper bound, e.g. RDP): it is at least the interval's lower end (both bound the
  true ε, one from below and one from above).

Each is checked with a relative slack (:data:`SLACK`) for floating-point rounding only, far below the widths
checked (a 1 % error fails every check; tested).

The references (one function each; the heavy libraries load on first use):

* :func:`gaussian_epsilon` — the Gaussian mechanism at σ/√E (deterministic batches): the closed form
  δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2), μ = √E/σ (Balle & Wang 2018, Thm 8), inverted by bisection in mpmath
  at 50 digits; a point.
* :func:`pld_pair` — the Poisson-subsampled Gaussian (Poisson; WOR as sensitivity 2, Lebeda et al. Prop. 9)
  by dp_accounting's own PLD API: the pessimistic connect-the-dots PLD (an upper bound) and the optimistic
  privacy-bucket PLD (a lower bound), composed by dp_accounting; an interval.
* :func:`phi_interval` — the φ (characteristic-function) accountant's certified interval (Zhu et al. 2022;
  dpsampling's ``method="cf"``), which shares no step with the PLD methods of the default interval; an interval.
* :func:`allocation_range` — balls-and-bins by PLD_accounting's ``gaussian_allocation_epsilon_range`` (Feldman &
  Shenfeld's dominating and dominated allocation PLDs, refined until its gap is at most the ``abs_tol`` asked); an
  interval.
* :func:`allocation_fine` — balls-and-bins by our own allocation accountant on a 10× finer grid: the same
  method, so it checks the discretisation only; used where PLD_accounting does not finish; an interval.
* :func:`run_upper_bounds` — a run of several phases (:mod:`dpsampling.phases`) by dp_accounting's own accountants on
  the ``ComposedDpEvent`` of its phases' events: the pessimistic ``PLDAccountant`` and the ``RdpAccountant`` (the
  analysis Opacus's ``rdp`` accountant implements), each an upper bound of ε(δ) after every phase.
* :func:`shuffle_ec_lower` — the one-epoch shuffle lower bound of Chua et al. (ICML 2024, §4.3): the event
  E_C = {max_t w_t ≥ C} under the pair P = Σ_t N(2e_t, σ²I)/T, Q = Σ_t N(e_t, σ²I)/T gives
  ε ≥ log((P(E_C) − δ)/Q(E_C)); recomputed in mpmath over the thresholds C of the same grid; a lower end.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

from dpsampling.engine.errors import ParameterError

#: relative slack of every check: floating-point rounding of the two computations, nothing else
SLACK = 1e-9
#: digits of the mpmath references
DIGITS = 50
#: WOR's dominating pair is Poisson's with sensitivity 2 (Lebeda et al. 2024, Prop. 9)
WOR_SENSITIVITY = 2.0
#: the thresholds C of Chua et al. §4.3 (the library's default grid): 0, 0.01, ..., 100
C_STEP, C_MAX = 0.01, 100.0
#: the kinds of reference and how an interval is checked against each
CHECKS = {"point": "contains", "interval": "overlaps", "lower end": "equals lower end",
          "upper bound": "is at least the lower end"}
#: dp_accounting's convention: an inner GaussianDpEvent's noise multiplier is relative to the relation's sensitivity
#: (add/remove 1, replace-one 2: clipped gradients of norm 1 move the sum by 2)
PLD_SENSITIVITY = {"add_remove": 1.0, "replace_one": WOR_SENSITIVITY}
#: the relation under which a rate sampler's dominating pair is the Poisson-subsampled Gaussian's add/remove pair at
#: σ/``spec.sensitivity`` (Poisson: 1; WOR: 2, Lebeda et al. 2024, Prop. 9)
PLD_RELATION = "add_remove"
#: where PLD_accounting was measured not to finish (steps per epoch, epochs, seconds)
ALLOCATION_UNFINISHED = (235, 60, 420)
#: the Monte Carlo failure probability the library uses by default (its KL band needs ln(4/β)/δ samples)
MC_FAILURE_PROB = 0.01
#: relative slack of the Chua et al. Thm 4.1 check (a shuffled run's lower end ≤ the deterministic value)
THM41_SLACK = 1e-9


@dataclass(frozen=True)
class Reference:
    """An independent value (``kind="point"``, lower = upper), interval (``"interval"``) or lower end
    (``"lower end"``) of ε(δ), and the method that gave it."""

    lower: float
    upper: float
    kind: str
    method: str

    def __post_init__(self):
        if self.kind not in CHECKS:
            raise ParameterError('kind', 'one of the CHECKS', self.kind,
                                 message=f"kind must be one of {', '.join(CHECKS)} (got {self.kind!r})")

    @property
    def check(self) -> str:
        return CHECKS[self.kind]


def agrees(lower: float, upper: float, ref: Reference) -> bool:
    """Whether the interval [lower, upper] is consistent with ``ref``: contains its point, overlaps its
    interval, has its lower end, or has its lower end at most ``ref``'s upper bound (each up to a relative
    :data:`SLACK`)."""
    lo, up = float(lower), float(upper)
    if not (math.isfinite(lo) and math.isfinite(up) and lo <= up):
        return False

    def slack(x):
        return SLACK * abs(x)

    if ref.kind == "lower end":
        return abs(lo - ref.lower) <= slack(ref.lower)
    if ref.kind == "upper bound":
        return lo - slack(lo) <= ref.upper
    return lo - slack(lo) <= ref.upper and ref.lower <= up + slack(up)


# --------------------------------------------------------------------------- which reference a row gets


def choose(row: dict, *, delta: float, sigma: float, epochs: int, max_pld_points: float = 1_200_000,
           allocation_max_steps: int = 100, allocation_rel_tol: float = 0.01):
    """(Reference or None, note): the independent reference of one audit row (``sampler``, ``steps``,
    ``q``, ``discretization``, ``upper``, ``method``), the one its spec names (``SamplerSpec.reference``, a key of
    :data:`REFERENCES`), so that a sampler registered later gets the reference it declares:

    * ``gaussian_epsilon``: :func:`gaussian_epsilon` at σ/√E (an exact answer of one batch per step);
    * ``pld_pair``: a rate sampler with a dominating Poisson pair under its relation (:data:`PLD_RELATION`, at
      σ/``spec.sensitivity``):
      :func:`pld_pair` at a tenth of the row's discretisation where its predicted grid has at most
      ``max_pld_points`` points, else :func:`phi_interval` (``note`` says why);
    * ``allocation_range``: :func:`allocation_range` with a gap of ``allocation_rel_tol`` × the upper end where
      steps per epoch × epochs ≤ ``allocation_max_steps``, else :func:`allocation_fine`;
    * ``shuffle_ec_lower``: :func:`shuffle_ec_lower` in one epoch (where the lower end is the one-epoch E_C
      bound); none beyond.

    ``note`` is "" when a reference was computed as planned, else why it differs or is absent."""
    from dpsampling import samplers

    spec = samplers.get_spec(row["sampler"])
    if not spec.reference:
        return None, f"no reference for sampler {spec.name}"
    return REFERENCES[spec.reference](spec, row, delta=delta, sigma=sigma, epochs=epochs,
                                      max_pld_points=max_pld_points, allocation_max_steps=allocation_max_steps,
                                      allocation_rel_tol=allocation_rel_tol)


def _gaussian_reference(spec, row, *, delta, sigma, epochs, **_):
    return gaussian_epsilon(delta, sigma, epochs), ""


def _pld_reference(spec, row, *, delta, sigma, epochs, max_pld_points, **_):
    from dpsampling.engine.cf import CFAccuracyError
    from dpsampling.samplers.poisson import pld_size_estimate

    if spec.relation != PLD_RELATION:
        return None, f"no reference for sampler {spec.name} (no dominating Poisson pair under {spec.relation})"
    steps = int(row["steps"])
    sens, q, total = float(spec.sensitivity), float(row["q"]), steps * epochs
    d = float(row["discretization"]) / 10 if math.isfinite(float(row["discretization"])) else math.nan
    points = pld_size_estimate(sigma / sens, q, total, d)[0] if math.isfinite(d) else math.inf
    if points <= max_pld_points:
        return pld_pair(delta, sigma=sigma, q=q, total_steps=total, discretization=d, sensitivity=sens), ""
    why = (f"dp_accounting pair at d = {d:.0e}: about {points:.2g} grid points "
           f"(> reference_max_pld_points = {max_pld_points:.2g})")
    try:
        return phi_interval(spec.name, delta, sigma=sigma, q=q, steps=steps, epochs=epochs), why
    except CFAccuracyError as exc:
        return None, f"{why}; φ accountant: {str(exc).split(':')[-1].strip()}"


def _allocation_reference(spec, row, *, delta, sigma, epochs, allocation_max_steps, allocation_rel_tol, **_):
    steps = int(row["steps"])
    if steps * epochs <= allocation_max_steps:
        return allocation_range(delta, sigma=sigma, steps=steps, epochs=epochs,
                                abs_tol=allocation_rel_tol * float(row["upper"])), ""
    t, e, s = ALLOCATION_UNFINISHED
    return allocation_fine(delta, sigma=sigma, steps=steps, epochs=epochs), (
        f"PLD_accounting only where steps × epochs ≤ {allocation_max_steps} (at {t} × {e} it did not "
        f"finish in {s} s); Monte Carlo needs about ln(4/β)/δ = {math.log(4 / MC_FAILURE_PROB) / delta:.1e} "
        f"samples per direction (β = {MC_FAILURE_PROB}); so the same accountant on a 10× finer grid")


def _ec_reference(spec, row, *, delta, sigma, epochs, **_):
    if epochs == 1:
        return shuffle_ec_lower(delta, sigma, int(row["steps"])), ""
    return None, (f"lower end {row['lower_method']} (E = {epochs}): no cheap independent recomputation; "
                  "lower ≤ deterministic checked")


def check_below_deterministic(rows, where) -> None:
    """Raise RuntimeError if a one-batch-per-step row whose upper end is only the best known one (a shuffled run)
    has a lower end above the exact row of one batch per step (fixed order) at the same point: shuffling never
    does worse than the fixed order (Chua et al. ICML 2024, Thm 4.1), so such a lower end is a bug."""
    from dpsampling import samplers

    specs = {r["sampler"]: samplers.get_spec(r["sampler"]) for r in rows}
    exact = [r for r in rows
             if specs[r["sampler"]].audit_kind == "exact" and specs[r["sampler"]].batch == "one_per_step"]
    if not exact:
        return
    bound = exact[0]["value"] * (1 + THM41_SLACK)
    for r in rows:
        sp = specs[r["sampler"]]
        if sp.upper_best_known and sp.batch == "one_per_step" and r["lower"] > bound:
            raise RuntimeError(f"{r['sampler']} at {where}: lower bound {r['lower']!r} exceeds the deterministic "
                               f"value {exact[0]['value']!r}: contradicts Chua Thm 4.1, a bug")


# --------------------------------------------------------------------------- deterministic: the Gaussian, mpmath


def gaussian_epsilon(delta: float, sigma: float, epochs: int = 1) -> Reference:
    """ε(δ) of the Gaussian mechanism at noise σ/√E (E compositions of sensitivity 1 at noise σ) in mpmath at
    :data:`DIGITS` digits: δ(ε) is decreasing in ε, so bisection brackets the root; returned as a point."""
    import mpmath as mp

    with mp.workdps(DIGITS):
        mu = mp.sqrt(epochs) / mp.mpf(sigma)
        d = mp.mpf(delta)

        def excess(e):
            return mp.ncdf(-e / mu + mu / 2) - mp.exp(e) * mp.ncdf(-e / mu - mu / 2) - d

        lo, hi = mp.mpf(0), mp.mpf(1)
        if excess(lo) <= 0:
            return Reference(0.0, 0.0, "point", "Gaussian closed form (mpmath)")
        while excess(hi) > 0:
            lo, hi = hi, 2 * hi
        for _ in range(4 * DIGITS):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if excess(mid) > 0 else (lo, mid)
        value = float((lo + hi) / 2)
    return Reference(value, value, "point", "Gaussian closed form (mpmath)")


# --------------------------------------------------------------------------- Poisson / WOR: dp_accounting, φ


def pld_pair(delta: float, *, sigma: float, q: float, total_steps: int, discretization: float,
             sensitivity: float = 1.0) -> Reference:
    """ε(δ) after ``total_steps`` compositions of the Poisson-subsampled Gaussian (add/remove: the larger of the
    two directions) from dp_accounting's ``from_gaussian_mechanism`` at ``discretization``: upper end the
    pessimistic connect-the-dots PLD (its pair dominates the true one), lower end the optimistic privacy-bucket
    PLD (losses rounded down: dominated), each composed by dp_accounting's ``self_compose``."""
    ends = []
    for pessimistic in (True, False):
        one = _gaussian_pld(float(sigma), float(sensitivity), float(q), float(discretization), pessimistic)
        ends.append(float(one.self_compose(int(total_steps)).get_epsilon_for_delta(delta)))
    up, lo = ends
    return Reference(lo, up, "interval", f"dp_accounting PLD pair (d = {discretization:.0e})")


@functools.lru_cache(maxsize=16)
def _gaussian_pld(sigma: float, sensitivity: float, q: float, discretization: float, pessimistic: bool):
    """dp_accounting's one-step PLD of :func:`pld_pair` (pessimistic: connect-the-dots), kept for the next call with
    the same arguments (the epochs of one run differ only in the number of compositions): a pure function of its
    arguments, and ``self_compose`` returns a new PLD without changing this one."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    return pld.from_gaussian_mechanism(sigma, sensitivity=sensitivity, sampling_prob=q,
                                       value_discretization_interval=discretization,
                                       pessimistic_estimate=pessimistic, use_connect_dots=pessimistic)


def phi_interval(sampler: str, delta: float, *, sigma: float, q: float, steps: int, epochs: int) -> Reference:
    """The φ accountant's certified interval of ``sampler`` (poisson or wor; ``method="cf"``): a contour
    inversion of the characteristic function with a certified error bound (Zhu et al. 2022), no PLD.  Raises
    :class:`dpsampling.engine.cf.CFAccuracyError` where it cannot certify its error budget."""
    from dpsampling import samplers

    r = samplers.account(sampler, "epsilon", delta, sigma=sigma, steps=steps, epochs=epochs, q=q, method="cf")
    return Reference(float(r.lower), float(r.upper), "interval", "φ accountant")


# --------------------------------------------------------------------------- a run of phases: dp_accounting

#: dp_accounting's name of a sampler's neighbouring relation
DP_ACCOUNTING_RELATIONS = {"add_remove": "ADD_OR_REMOVE_ONE", "replace_one": "REPLACE_ONE"}
#: the methods of :func:`run_upper_bounds`, in its order
RUN_METHODS = ("dp_accounting PLD (pessimistic)", "dp_accounting RDP")


#: the dp_accounting events :func:`phase_event` builds
PHASE_EVENTS = ("PoissonSampledDpEvent", "SampledWithoutReplacementDpEvent")


def event_relation(sampler: str) -> str:
    """The relation (dpsampling's name) dp_accounting accounts ``sampler``'s phase event under: the sampler's own
    where it has an event there, else the first that has one (WOR: ``SampledWithoutReplacementDpEvent`` is accounted
    under REPLACE_ONE only, while WOR's own relation is add/remove)."""
    from dpsampling import samplers
    from dpsampling.integrations.dp_accounting import SAMPLER_NAMES

    names = {v: k for k, v in DP_ACCOUNTING_RELATIONS.items()}
    rels = [names[rel] for (e, rel), s in SAMPLER_NAMES.items() if s == sampler and e in PHASE_EVENTS and rel in names]
    own = samplers.get_spec(sampler).relation
    return own if own in rels or not rels else rels[0]


def phase_event(sampler: str, *, sigma: float, dataset_size: int, batch_size: int, total_steps: int, relation=None):
    """dp_accounting's event of one phase (``total_steps`` steps) of ``sampler`` under ``relation`` (None:
    :func:`event_relation`), the event
    :class:`dpsampling.integrations.dp_accounting.CertifiedAccountant` reads as that sampler's phase
    (its ``SAMPLER_NAMES``) in dp_accounting's convention (an inner ``GaussianDpEvent``'s noise multiplier is relative
    to the relation's sensitivity, :data:`PLD_SENSITIVITY`): add/remove ``PoissonSampledDpEvent(B/n,
    GaussianDpEvent(σ))``, replace-one ``SampledWithoutReplacementDpEvent(n, B, GaussianDpEvent(σ/2))``;
    self-composed ``total_steps`` times."""
    from dp_accounting import dp_event as ev

    from dpsampling import samplers
    from dpsampling.integrations.dp_accounting import SAMPLER_NAMES

    relation = relation or event_relation(sampler)
    events = [e for (e, rel), s in SAMPLER_NAMES.items()
              if s == sampler and rel == DP_ACCOUNTING_RELATIONS.get(relation) and e in PHASE_EVENTS]
    if not events:
        raise ParameterError("sampler", "a sampler with a dp_accounting event ("
                             + ", ".join(sorted({s for s in SAMPLER_NAMES.values()})) + ")", sampler)
    gaussian = ev.GaussianDpEvent(float(sigma) / PLD_SENSITIVITY[relation])
    n, b = int(dataset_size), int(batch_size)
    one = {"PoissonSampledDpEvent": lambda: ev.PoissonSampledDpEvent(b / n, gaussian),
           "SampledWithoutReplacementDpEvent": lambda: ev.SampledWithoutReplacementDpEvent(n, b, gaussian)}[events[0]]()
    return ev.SelfComposedDpEvent(one, int(total_steps))


def run_upper_bounds(sampler: str, phases, delta: float, *, dataset_size: int, relation: str,
                     discretization: float = 1e-4) -> list:
    """dp_accounting's own ε(δ) of a run after each of its ``phases`` (``(sigma, batch_size, total_steps)``, one
    ``sampler``), its events (:func:`phase_event`) composed in order into each accountant, under ``relation``
    (dpsampling's name): for each phase, ``{method: (Reference or None, note)}`` over :data:`RUN_METHODS`.

    * ``PLDAccountant`` (pessimistic estimate, value discretisation ``discretization``): its connect-the-dots pair
      dominates each step's, so its composition bounds ε from above up to its own rounding;
    * ``RdpAccountant``: Rényi DP of each step converted to (ε, δ), a valid upper bound (and the analysis Opacus's
      ``rdp`` accountant implements, with its own orders).

    Each answer is a :class:`Reference` of kind ``upper bound``; an accountant that does not support an event
    (``supports`` False: dp_accounting's PLD has no branch for ``SampledWithoutReplacementDpEvent``) gives None and
    the reason, never a value of another analysis."""
    import dp_accounting

    rel = getattr(dp_accounting.NeighboringRelation, DP_ACCOUNTING_RELATIONS[relation])
    accountants = {RUN_METHODS[0]: dp_accounting.pld.PLDAccountant(rel, value_discretization_interval=discretization),
                   RUN_METHODS[1]: dp_accounting.rdp.RdpAccountant(neighboring_relation=rel)}
    labels = {RUN_METHODS[0]: f"{RUN_METHODS[0]}, d = {discretization:.0e}", RUN_METHODS[1]: RUN_METHODS[1]}
    why = {}
    out = []
    for sigma, batch_size, total_steps in phases:
        event = phase_event(sampler, sigma=sigma, dataset_size=dataset_size, batch_size=batch_size,
                            total_steps=total_steps, relation=relation)
        row = {}
        for method, acc in accountants.items():
            if method not in why and not acc.supports(event):
                why[method] = (f"{type(acc).__name__} does not support {type(event.event).__name__} under "
                               f"{DP_ACCOUNTING_RELATIONS[relation]}")
            if method in why:
                row[method] = (None, why[method])
                continue
            acc.compose(event)
            row[method] = (Reference(0.0, float(acc.get_epsilon(delta)), "upper bound", labels[method]), "")
        out.append(row)
    return out


# --------------------------------------------------------------------------- balls-and-bins: PLD_accounting


def allocation_range(delta: float, *, sigma: float, steps: int, epochs: int, abs_tol: float) -> Reference:
    """balls-and-bins ε(δ) from PLD_accounting's ``gaussian_allocation_epsilon_range`` (random allocation of
    one step among ``steps`` per epoch, ``epochs`` epochs): its dominating PLD gives the upper end, its dominated
    PLD the lower end, refined until their gap is at most ``abs_tol`` (absolute, PLD_accounting's
    ``epsilon_accuracy``; its best pair is returned if it stops earlier, still valid bounds)."""
    import warnings

    from PLD_accounting import gaussian_allocation_epsilon_range

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # "did not converge": the best bounds are still bounds
        up, lo = gaussian_allocation_epsilon_range(delta=delta, sigma=sigma, num_steps=int(steps),
                                                   num_epochs=int(epochs), epsilon_accuracy=float(abs_tol))
    return Reference(float(lo), float(up), "interval", f"PLD_accounting epsilon range (accuracy {abs_tol:.2g})")


def allocation_fine(delta: float, *, sigma: float, steps: int, epochs: int) -> Reference:
    """balls-and-bins ε(δ) from dpsampling's allocation accountant at ``accuracy="fine"`` (grid refined until the
    relative width is ≤ 1e-3, 10× below the default): a check of the default run's discretisation only, not of
    the method, for runs where PLD_accounting does not finish; both intervals are certified, so they overlap."""
    from dpsampling.samplers import balls_and_bins

    r = balls_and_bins.epsilon(delta, sigma=sigma, steps=int(steps), epochs=int(epochs), accuracy="fine")
    return Reference(float(r.lower), float(r.upper), "interval", "allocation accountant, accuracy fine (finer grid)")


# --------------------------------------------------------------------------- shuffle, one epoch: E_C sets, mpmath


def shuffle_ec_lower(delta: float, sigma: float, steps: int) -> Reference:
    """The E_C lower bound on one epoch's shuffle ε(δ) (module docstring) in mpmath at :data:`DIGITS` digits:
    the largest log((P(E_C) − δ)/Q(E_C)) over the thresholds C = 0, 0.01, …, 100 (0 if none has P(E_C) > δ),
    with P(E_C) = 1 − Φ((C−2)/σ)·Φ(C/σ)^(T−1) and Q(E_C) = 1 − Φ((C−1)/σ)·Φ(C/σ)^(T−1).  The maximum is found
    on the grid of step 0.1 and then on every grid threshold within 0.2 of that one."""
    import mpmath as mp

    with mp.workdps(DIGITS):
        s, t, d = mp.mpf(sigma), int(steps), mp.mpf(delta)

        def eps_at(k):  # k: index of C = k·C_STEP on the grid
            c = mp.mpf(k) * mp.mpf(C_STEP)
            pw = mp.ncdf(c / s) ** (t - 1)
            p, q = 1 - mp.ncdf((c - 2) / s) * pw, 1 - mp.ncdf((c - 1) / s) * pw
            return mp.log((p - d) / q) if p > d else mp.mpf(0)

        n = round(C_MAX / C_STEP)
        coarse = max(range(0, n + 1, 10), key=eps_at)
        best = max(eps_at(k) for k in range(max(0, coarse - 20), min(n, coarse + 20) + 1))
        value = float(max(best, mp.mpf(0)))
    return Reference(value, value, "lower end", "E_C sets (mpmath)")


#: the references a sampler's spec may name (``SamplerSpec.reference``): the reference function's name -> how
#: :func:`choose` plans it for one row (where it applies, its fallback and the note saying why)
REFERENCES = {"gaussian_epsilon": _gaussian_reference, "pld_pair": _pld_reference,
              "allocation_range": _allocation_reference, "shuffle_ec_lower": _ec_reference}

__all__ = ["CHECKS", "REFERENCES", "Reference", "agrees", "allocation_fine", "allocation_range",
           "check_below_deterministic", "choose", "gaussian_epsilon", "phi_interval", "pld_pair", "shuffle_ec_lower"]

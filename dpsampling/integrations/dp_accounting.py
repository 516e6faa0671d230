"""A dp_accounting ``PrivacyAccountant`` with dpsampling's certified intervals: the one-line swap for a dp_accounting
or JAX Privacy user (``CertifiedAccountant(relation)`` where ``PLDAccountant(relation)`` or ``RdpAccountant(relation)``
stood).

dp_accounting's contract: :meth:`~CertifiedAccountant.compose` (from the base class) takes a ``DpEvent`` where
:meth:`supports` is True and raises ``UnsupportedEventError`` otherwise; :meth:`get_epsilon` returns the certified
upper end of ε(δ) of everything composed so far (so every ε it gives is a valid bound, as dp_accounting's pessimistic
PLD's is meant to be), :meth:`get_delta` that of δ(ε); :meth:`get_epsilon_interval` / :meth:`get_delta_interval`
return the certified ``(lower, upper)`` and :meth:`result` the full :class:`~dpsampling.engine.result.AccountingResult`.
It works with ``dp_accounting.calibrate_dp_mechanism`` (which keeps the returned parameter on the side where
``get_epsilon`` ≤ the target, so the certified ε meets it).

Events (dp_accounting's convention: an inner ``GaussianDpEvent``'s noise multiplier is relative to the sensitivity
under the accountant's neighbouring relation; add-or-remove and REPLACE_SPECIAL (zero-out: a record replaced by one
whose clipped gradient is 0) move the sum by the clip norm, replace-one by twice it), each a phase of a sampler:

* ``ADD_OR_REMOVE_ONE``: ``PoissonSampledDpEvent(q, GaussianDpEvent(σ))`` is a Poisson phase at (σ, q);
  ``GaussianDpEvent(σ)`` the Gaussian at σ (q = 1); ``TruncatedSubsampledGaussianDpEvent(n, q, B, σ)`` a step of
  the ``truncated_poisson`` sampler (rate q, dataset_size n, max_batch_size B; JAX Privacy's
  ``truncated_dpsgd_event``), whose certified upper end is at most dp_accounting's value for the same event.
* ``REPLACE_ONE``: ``SampledWithoutReplacementDpEvent(n, b, GaussianDpEvent(σ'))`` is a WOR phase at q = b/n whose
  noise multiplier relative to the replace-one sensitivity is σ' (clipped gradients of norm 1 move the sum by 2, so
  JAX Privacy passes σ/2 for a run at σ: ``SampledWithoutReplacementDpEvent(60000, 256, GaussianDpEvent(0.55))`` is
  dpsampling's ``wor`` at σ = 1.1), answered under replace-one (WOR's own relation is add-or-remove): its upper end
  the composed pair dominating both directions (:mod:`dpsampling.samplers.relations`, ``max_pair``; below
  dp_accounting's RDP for the same event); ``GaussianDpEvent(σ')`` the Gaussian at σ' (q = 1);
  ``ShuffledGaussianDpEvent`` (below) the shuffle sampler at σ = 2σ' under replace-one
  (:mod:`dpsampling.samplers.relations`).
* ``REPLACE_SPECIAL``: ``PoissonSampledDpEvent`` and ``GaussianDpEvent`` as under add-or-remove (the same privacy
  curves), and dpsampling's own events :class:`ShuffledGaussianDpEvent` (one epoch of a shuffled loader) and
  :class:`BallsAndBinsGaussianDpEvent` (one epoch of balls-and-bins), analysed under zero-out.  dp_accounting has
  no event for either, nor (in the installed version) a random-allocation event.
* ``SelfComposedDpEvent`` and ``ComposedDpEvent`` of these; ``NoOpDpEvent`` (nothing), ``NonPrivateDpEvent`` and a
  Gaussian of noise 0 (ε = ∞, δ = 1 beyond ε = ∞, as dp_accounting's accountants say).

A ledger of one setting (one event, composed any number of times) is :func:`dpsampling.samplers.account`'s question
(the same answer as ``dpsampling epsilon``); a ledger of different settings is a run of phases
(:func:`dpsampling.samplers.phases.epsilon`; full-batch Gaussians compose exactly, T Gaussians at σᵢ being one at (Σ
Tᵢ/σᵢ²)^{−1/2}, also next to sampled events), only where that module holds every sampler in the ledger under the
accountant's relation as the sampler's own (or, for WOR under replace-one, answers with both ends). Everything else
is not supported (``supports`` False with why, never a wrong answer): ``PoissonSampledDpEvent`` under
``REPLACE_ONE``, ``SampledWithoutReplacementDpEvent`` under the other relations, a relation a sampler's analysis
does not cover (balls-and-bins under replace-one, shuffle under add-or-remove, truncated Poisson beyond
add-or-remove), a mix of settings the phases module does not hold (e.g. a truncated event with another), Laplace,
mixtures and the rest.
"""

from __future__ import annotations

import math

try:
    import dp_accounting
    from dp_accounting import dp_event
except ImportError as exc:  # pragma: no cover - dp_accounting is a core dependency
    raise ImportError(f"dpsampling.integrations.dp_accounting needs dp_accounting ({exc})") from exc

import attr

from dpsampling import samplers
from dpsampling.samplers import phases as _phases

from ._inputs import plain

Relation = dp_accounting.NeighboringRelation


@attr.s(frozen=True, slots=True, auto_attribs=True)
class ShuffledGaussianDpEvent(dp_event.DpEvent):
    """One epoch of DP-SGD on a shuffled loader (a fresh random permutation of the dataset cut into
    ``steps_per_epoch`` batches, one per step), each step the Gaussian mechanism at ``noise_multiplier`` relative to
    the sensitivity under the accountant's relation; compose it ``epochs`` times (``SelfComposedDpEvent``) for a run:
    dpsampling's ``shuffle`` sampler (REPLACE_SPECIAL: zero-out, its own relation; REPLACE_ONE: at σ = 2σ')."""

    noise_multiplier: float
    steps_per_epoch: int


@attr.s(frozen=True, slots=True, auto_attribs=True)
class BallsAndBinsGaussianDpEvent(dp_event.DpEvent):
    """One epoch of balls-and-bins batches (every example in one uniformly random step of ``steps_per_epoch``,
    independently), each step the Gaussian mechanism at ``noise_multiplier``: dpsampling's ``balls_and_bins``
    sampler, analysed under zero-out (REPLACE_SPECIAL); compose it ``epochs`` times for a run."""

    noise_multiplier: float
    steps_per_epoch: int


#: dp_accounting's relation -> dpsampling's relation (:data:`dpsampling.samplers.spec.RELATIONS`)
RELATIONS = {"ADD_OR_REMOVE_ONE": "add_remove", "REPLACE_ONE": "replace_one", "REPLACE_SPECIAL": "zero_out"}
#: (event, dp_accounting relation) -> the dpsampling sampler whose phase it is
SAMPLER_NAMES = {("PoissonSampledDpEvent", "ADD_OR_REMOVE_ONE"): "poisson",
                 ("GaussianDpEvent", "ADD_OR_REMOVE_ONE"): "poisson",
                 ("TruncatedSubsampledGaussianDpEvent", "ADD_OR_REMOVE_ONE"): "truncated_poisson",
                 ("PoissonSampledDpEvent", "REPLACE_SPECIAL"): "poisson",
                 ("GaussianDpEvent", "REPLACE_SPECIAL"): "poisson",
                 ("ShuffledGaussianDpEvent", "REPLACE_SPECIAL"): "shuffle",
                 ("BallsAndBinsGaussianDpEvent", "REPLACE_SPECIAL"): "balls_and_bins",
                 ("SampledWithoutReplacementDpEvent", "REPLACE_ONE"): "wor",
                 ("GaussianDpEvent", "REPLACE_ONE"): "wor",
                 ("ShuffledGaussianDpEvent", "REPLACE_ONE"): "shuffle"}
#: the factor from dp_accounting's noise multiplier (relative to the relation's sensitivity) to the sampler's σ
_SIGMA_FACTOR = {"ADD_OR_REMOVE_ONE": 1.0, "REPLACE_SPECIAL": 1.0, "REPLACE_ONE": 2.0}


class _NotSupported(Exception):
    def __init__(self, event, why):
        super().__init__(why)
        self.event, self.why = event, why


def _key_words(key):
    sampler, sigma, q, steps, opts = key
    more = "".join(f", {k}={v}" for k, v in opts)
    rate = f", q={q:g}" if q is not None else f", {steps} steps per epoch"
    return f"{sampler} (σ={sigma:g}{rate}{more})"


class CertifiedAccountant(dp_accounting.PrivacyAccountant):
    """dp_accounting's ``PrivacyAccountant`` answered by dpsampling's certified intervals (module docstring).

    ``rel_tol``: the relative width asked of each interval (default: each sampler's own)."""

    def __init__(self, neighboring_relation: Relation = Relation.ADD_OR_REMOVE_ONE, rel_tol: float | None = None):
        super().__init__(neighboring_relation)
        self._rel_tol = rel_tol
        self._settings = {}  # setting (sampler, σ, q, steps per epoch, options) -> compositions, in order of arrival
        self._non_private = False

    # ----------------------------------------------------------------------------------------- dp_accounting's contract
    def _maybe_compose(self, event, count, do_compose):
        try:
            found, non_private = [], [False]
            self._collect(event, int(count), found, non_private)
            self._check_mix([k for k, _ in found])
        except _NotSupported as exc:
            return self.CompositionErrorDetails(invalid_event=exc.event if exc.event is not None else event,
                                                error_message=exc.why)
        if do_compose:
            for key, n in found:
                if n > 0:
                    self._settings[key] = self._settings.get(key, 0) + n
            self._non_private = self._non_private or non_private[0]
        return None

    def get_epsilon(self, target_delta: float) -> float:
        """The certified upper end of ε(``target_delta``) of everything composed (dp_accounting's ``get_epsilon``)."""
        r = self.result(target_delta)
        return r if isinstance(r, float) else float(r.value)

    def get_delta(self, target_epsilon: float) -> float:
        """The certified upper end of δ(``target_epsilon``) (dp_accounting's ``get_delta``)."""
        r = self.result(epsilon=target_epsilon)
        return r if isinstance(r, float) else float(r.value)

    # ----------------------------------------------------------------------------------------------- dpsampling's own
    def get_epsilon_interval(self, target_delta: float) -> tuple:
        """``(lower, upper)``: certified bounds on ε(``target_delta``) (lower 0 where the answer has no lower end)."""
        return self._interval(self.result(target_delta))

    def get_delta_interval(self, target_epsilon: float) -> tuple:
        """``(lower, upper)``: certified bounds on δ(``target_epsilon``) (lower 0 where the answer has no lower end)."""
        return self._interval(self.result(epsilon=target_epsilon))

    @staticmethod
    def _interval(r):
        if isinstance(r, float):
            return r, r
        lower = r.lower if r.lower is not None else (r.value if r.kind == "exact" else 0.0)
        return float(lower), float(r.value)

    def result(self, delta: float | None = None, *, epsilon: float | None = None):
        """The :class:`~dpsampling.engine.result.AccountingResult` of ε(``delta``) (or of δ(``epsilon``)) of the
        ledger; a plain float where it is exact without accounting: 0 for an empty ledger (ε, and δ at ε ≥ 0), ∞ /
        1 with a non-private event."""
        if (delta is None) == (epsilon is None):
            raise TypeError("result() takes delta or epsilon=, one of them")
        if self._non_private:
            return math.inf if epsilon is None else 1.0
        if not self._settings:
            return 0.0
        quantity, target = ("epsilon", plain(delta)) if epsilon is None else ("delta", plain(epsilon))
        if len(self._settings) == 1:
            ((sampler, sigma, q, steps, opts), n), = self._settings.items()
            spec = samplers.get_spec(sampler)
            kw = dict(opts)
            if self._rel_tol is not None and any(o.name == "rel_tol" and (o.quantities is None or quantity in
                                                                          o.quantities) for o in spec.options):
                kw["rel_tol"] = self._rel_tol
            relation = RELATIONS[self._relation()]
            relation = None if relation == spec.relation else relation
            if q is None:  # one batch per step: n epochs of `steps`
                return samplers.account(sampler, quantity, target, sigma=sigma, steps=steps, epochs=n,
                                        relation=relation, **kw)
            return samplers.account(sampler, quantity, target, sigma=sigma, steps=n, q=q, relation=relation, **kw)
        run = [_phases.Phase(s, sigma, q, n, 1, dict(opts) or None) if q is not None else
               _phases.Phase(s, sigma, None, steps, n, dict(opts) or None)
               for (s, sigma, q, steps, opts), n in self._settings.items()]
        kw = {} if self._rel_tol is None else {"rel_tol": self._rel_tol}
        return (_phases.epsilon if quantity == "epsilon" else _phases.delta)(run, target,
                                                                             relation=RELATIONS[self._relation()], **kw)

    # ------------------------------------------------------------------------------------------------------ helpers
    def _relation(self):
        return self.neighboring_relation.name

    def _check_mix(self, keys):
        """_NotSupported unless the ledger with ``keys`` added is one setting or a run the phases module holds (every
        sampler in :data:`~dpsampling.samplers.phases.MECHANISMS`, under its own relation, or WOR under replace-one:
        both ends, ``max_pair``)."""
        from dpsampling.samplers.relations import coverage

        settings = list(dict.fromkeys([*self._settings, *keys]))
        if len(settings) <= 1:
            return
        rel = RELATIONS[self._relation()]
        for key in settings:
            spec = samplers.get_spec(key[0])
            if key[0] not in _phases.MECHANISMS or coverage(spec, rel).how not in ("native", "max_pair"):
                why = (f"not in a run of phases yet (dpsampling.samplers.phases holds "
                       f"{', '.join(_phases.MECHANISMS)})" if key[0] not in _phases.MECHANISMS else
                       f"analysed under {spec.relation}, not {rel}, and a run of phases is composed under each "
                       f"sampler's own relation")
                others = [_key_words(k) for k in settings if k != key]
                raise _NotSupported(None, f"composing {_key_words(key)} with {', '.join(others)}: dpsampling answers "
                                          f"one setting of this sampler, or a run of phases, and {key[0]} is {why}; "
                                          f"account the parts separately")

    def _collect(self, event, count, found, non_private):
        """Append ``count`` compositions of ``event`` to ``found`` as (setting, count); _NotSupported naming the
        sub-event and why."""
        rel = self._relation()
        if isinstance(event, dp_event.NoOpDpEvent):
            return
        if isinstance(event, dp_event.NonPrivateDpEvent):
            non_private[0] = True
            return
        if isinstance(event, dp_event.SelfComposedDpEvent):
            self._collect(event.event, int(event.count) * count, found, non_private)
            return
        if isinstance(event, dp_event.ComposedDpEvent):
            for e in event.events:
                self._collect(e, count, found, non_private)
            return
        if rel not in _SIGMA_FACTOR:
            raise _NotSupported(event, f"neighbouring relation {rel} is not supported (ADD_OR_REMOVE_ONE, "
                                       f"REPLACE_ONE or REPLACE_SPECIAL)")
        sampler = SAMPLER_NAMES.get((type(event).__name__, rel))
        if sampler is None:
            raise _NotSupported(event, self._why_not(event, rel))
        opts, steps = (), 1
        if isinstance(event, dp_event.GaussianDpEvent):
            sigma, q = event.noise_multiplier, 1.0
        elif isinstance(event, dp_event.PoissonSampledDpEvent):
            sigma, q = self._inner_sigma(event), event.sampling_probability
        elif isinstance(event, dp_event.TruncatedSubsampledGaussianDpEvent):
            sigma, q = event.noise_multiplier, event.sampling_probability
            n, b = int(event.dataset_size), int(event.truncated_batch_size)
            if b < 1 or n < 2 or not 0 < float(q) <= 1 or n * float(q) < 1:
                raise _NotSupported(event, f"dataset_size {n} (≥ 2, with dataset_size·sampling_probability ≥ 1), "
                                           f"truncated_batch_size {b} (≥ 1) or sampling_probability {q!r}: out of "
                                           f"range")
            opts = (("dataset_size", n), ("max_batch_size", b))
        elif isinstance(event, (ShuffledGaussianDpEvent, BallsAndBinsGaussianDpEvent)):
            sigma, q, steps = event.noise_multiplier, None, int(event.steps_per_epoch)
            if steps < 1:
                raise _NotSupported(event, f"steps_per_epoch {steps} must be ≥ 1")
        else:  # SampledWithoutReplacementDpEvent
            n, b = int(event.source_dataset_size), int(event.sample_size)
            if not 1 <= b <= n:
                raise _NotSupported(event, f"sample_size {b} must be in [1, source_dataset_size {n}]")
            sigma, q = self._inner_sigma(event), b / n
        if (q is not None and not 0 < float(q) <= 1) or not float(sigma) >= 0:
            raise _NotSupported(event, f"sampling probability {q!r} (must be in (0, 1]) or noise {sigma!r} (≥ 0)")
        if sigma == 0:
            if count > 0:
                non_private[0] = True
            return
        found.append(((sampler, _SIGMA_FACTOR[rel] * float(sigma), None if q is None else float(q), steps, opts),
                      count))

    @staticmethod
    def _why_not(event, rel):
        """Why ``event`` is not supported under ``rel``: the relation a sampler's analysis does not cover (its
        reason from :mod:`dpsampling.samplers.relations`), or an event dpsampling has no analysis of."""
        from dpsampling.samplers.relations import coverage

        name = type(event).__name__
        for (ev, _), sampler in SAMPLER_NAMES.items():
            if ev == name:
                cov = coverage(samplers.get_spec(sampler), RELATIONS[rel])
                mapped = " or ".join(r for (e, r) in SAMPLER_NAMES if e == name)
                why = cov.why if cov.how is None else (f"dpsampling reads it as its {sampler} sampler under {mapped} "
                                                       f"only")
                return f"{name} under {rel} is not supported by dpsampling's certified accountant: {why}"
        return f"{name} is not supported by dpsampling's certified accountant (no analysis of it)"

    @staticmethod
    def _inner_sigma(event):
        if not isinstance(event.event, dp_event.GaussianDpEvent):
            raise _NotSupported(event, f"only a GaussianDpEvent inside {type(event).__name__} is supported "
                                       f"(got {type(event.event).__name__})")
        return float(event.event.noise_multiplier)


__all__ = ["BallsAndBinsGaussianDpEvent", "CertifiedAccountant", "RELATIONS", "SAMPLER_NAMES",
           "ShuffledGaussianDpEvent"]

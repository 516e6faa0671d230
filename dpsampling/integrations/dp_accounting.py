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
under the accountant's neighbouring relation), each a phase of :mod:`dpsampling.samplers.phases`:

* ``ADD_OR_REMOVE_ONE``: ``PoissonSampledDpEvent(q, GaussianDpEvent(σ))`` is a Poisson phase at (σ, q);
  ``GaussianDpEvent(σ)`` the Gaussian at σ (q = 1).
* ``REPLACE_ONE``: ``SampledWithoutReplacementDpEvent(n, b, GaussianDpEvent(σ'))`` is a WOR phase at q = b/n whose
  noise multiplier relative to the replace-one sensitivity is σ' (clipped gradients of norm 1 move the sum by 2, so
  JAX Privacy passes σ/2 for a run at σ: ``SampledWithoutReplacementDpEvent(60000, 256, GaussianDpEvent(0.55))`` is
  dpsampling's ``wor`` at σ = 1.1); ``GaussianDpEvent(σ')`` the Gaussian at σ' (q = 1).
* ``SelfComposedDpEvent`` and ``ComposedDpEvent`` of these; ``NoOpDpEvent`` (nothing), ``NonPrivateDpEvent`` and a
  Gaussian of noise 0 (ε = ∞, δ = 1 beyond ε = ∞, as dp_accounting's accountants say).

Full-batch Gaussians compose exactly (T Gaussians at σᵢ are one at (Σ Tᵢ/σᵢ²)^{−1/2}), also next to sampled events
(:mod:`dpsampling.engine.phases`).  Everything else is not supported (``supports`` False, never a wrong answer): other relations (``REPLACE_SPECIAL``),
``PoissonSampledDpEvent`` under ``REPLACE_ONE`` (dpsampling's Poisson analysis is add-or-remove's),
``SampledWithoutReplacementDpEvent`` under ``ADD_OR_REMOVE_ONE``, Laplace, truncated, mixtures and the rest.
"""

from __future__ import annotations

import math

try:
    import dp_accounting
    from dp_accounting import dp_event
except ImportError as exc:  # pragma: no cover - dp_accounting is a core dependency
    raise ImportError(f"dpsampling.integrations.dp_accounting needs dp_accounting ({exc})") from exc

from dpsampling.samplers import phases as _phases

from ._inputs import plain

Relation = dp_accounting.NeighboringRelation
#: dp_accounting's events (under the accountant's relation) -> the dpsampling sampler whose phase they are
SAMPLER_NAMES = {("PoissonSampledDpEvent", "ADD_OR_REMOVE_ONE"): "poisson",
                 ("GaussianDpEvent", "ADD_OR_REMOVE_ONE"): "poisson",
                 ("SampledWithoutReplacementDpEvent", "REPLACE_ONE"): "wor",
                 ("GaussianDpEvent", "REPLACE_ONE"): "wor"}
#: the factor from dp_accounting's noise multiplier (relative to the relation's sensitivity) to the sampler's σ
_SIGMA_FACTOR = {"ADD_OR_REMOVE_ONE": 1.0, "REPLACE_ONE": 2.0}


class _NotSupported(Exception):
    def __init__(self, event, why):
        super().__init__(why)
        self.event, self.why = event, why


class CertifiedAccountant(dp_accounting.PrivacyAccountant):
    """dp_accounting's ``PrivacyAccountant`` answered by dpsampling's certified intervals (module docstring).

    ``rel_tol``: the relative width asked of each interval (default: the package's, 1e-3)."""

    def __init__(self, neighboring_relation: Relation = Relation.ADD_OR_REMOVE_ONE, rel_tol: float | None = None):
        super().__init__(neighboring_relation)
        self._rel_tol = rel_tol
        self._phases = []  # (sampler, σ, q, steps)
        self._non_private = False

    # ----------------------------------------------------------------------------------------- dp_accounting's contract
    def _maybe_compose(self, event, count, do_compose):
        try:
            found, non_private = [], [False]
            self._collect(event, int(count), found, non_private)
        except _NotSupported as exc:
            return self.CompositionErrorDetails(invalid_event=exc.event, error_message=exc.why)
        if do_compose:
            self._phases.extend(p for p in found if p[3] > 0)
            self._non_private = self._non_private or non_private[0]
        return None

    def get_epsilon(self, target_delta: float) -> float:
        """The certified upper end of ε(``target_delta``) of everything composed (dp_accounting's ``get_epsilon``)."""
        r = self.result(target_delta)
        return r if isinstance(r, float) else float(r.upper)

    def get_delta(self, target_epsilon: float) -> float:
        """The certified upper end of δ(``target_epsilon``) (dp_accounting's ``get_delta``)."""
        r = self.result(epsilon=target_epsilon)
        return r if isinstance(r, float) else float(r.upper)

    # ----------------------------------------------------------------------------------------------- dpsampling's own
    def get_epsilon_interval(self, target_delta: float) -> tuple:
        """``(lower, upper)``: certified bounds on ε(``target_delta``)."""
        r = self.result(target_delta)
        return (r, r) if isinstance(r, float) else (float(r.lower), float(r.upper))

    def get_delta_interval(self, target_epsilon: float) -> tuple:
        """``(lower, upper)``: certified bounds on δ(``target_epsilon``)."""
        r = self.result(epsilon=target_epsilon)
        return (r, r) if isinstance(r, float) else (float(r.lower), float(r.upper))

    def result(self, delta: float | None = None, *, epsilon: float | None = None):
        """The :class:`~dpsampling.engine.result.AccountingResult` of ε(``delta``) (or of δ(``epsilon``)) of the
        ledger; a plain float where it is exact without accounting: 0 for an empty ledger (ε, and δ at ε ≥ 0), ∞ /
        1 with a non-private event."""
        if (delta is None) == (epsilon is None):
            raise TypeError("result() takes delta or epsilon=, one of them")
        if self._non_private:
            return math.inf if epsilon is None else 1.0
        run = self._run()
        if not run:
            return 0.0
        kw = {} if self._rel_tol is None else {"rel_tol": self._rel_tol}
        if epsilon is None:
            return _phases.epsilon(run, plain(delta), **kw)
        return _phases.delta(run, plain(epsilon), **kw)

    # ------------------------------------------------------------------------------------------------------ helpers
    def _relation(self):
        return self.neighboring_relation.name

    def _collect(self, event, count, found, non_private):
        """Append ``count`` compositions of ``event`` to ``found`` as phases (sampler, σ, q, steps); _NotSupported
        naming the sub-event and why."""
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
            raise _NotSupported(event, f"neighbouring relation {rel} is not supported (ADD_OR_REMOVE_ONE or "
                                       f"REPLACE_ONE)")
        sampler = SAMPLER_NAMES.get((type(event).__name__, rel))
        if sampler is None:
            raise _NotSupported(event, f"{type(event).__name__} under {rel} is not supported by dpsampling's "
                                       f"certified accountant")
        if isinstance(event, dp_event.GaussianDpEvent):
            sigma, q = event.noise_multiplier, 1.0
        elif isinstance(event, dp_event.PoissonSampledDpEvent):
            sigma, q = self._inner_sigma(event), event.sampling_probability
        else:  # SampledWithoutReplacementDpEvent
            n, b = int(event.source_dataset_size), int(event.sample_size)
            if not 1 <= b <= n:
                raise _NotSupported(event, f"sample_size {b} must be in [1, source_dataset_size {n}]")
            sigma, q = self._inner_sigma(event), b / n
        if not 0 < float(q) <= 1 or not sigma >= 0:
            raise _NotSupported(event, f"sampling probability {q!r} (must be in (0, 1]) or noise {sigma!r} (≥ 0)")
        if sigma == 0 and count > 0:
            non_private[0] = True
            return
        found.append((sampler, _SIGMA_FACTOR[rel] * float(sigma), float(q), count))

    @staticmethod
    def _inner_sigma(event):
        if not isinstance(event.event, dp_event.GaussianDpEvent):
            raise _NotSupported(event, f"only a GaussianDpEvent inside {type(event).__name__} is supported "
                                       f"(got {type(event.event).__name__})")
        return float(event.event.noise_multiplier)

    def _run(self):
        """The ledger as a list of :class:`~dpsampling.samplers.phases.Phase` (the engine merges equal settings and
        the full-batch Gaussians)."""
        return [_phases.Phase(s, sigma, q, t) for s, sigma, q, t in self._phases if t > 0]


__all__ = ["CertifiedAccountant", "SAMPLER_NAMES"]

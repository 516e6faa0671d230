"""The certified interval of :mod:`.poisson_interval` after each of several epochs.

An ε(δ) question after E epochs of T steps asks for the T·E-fold composition of the subsampled Gaussian's
one-step pair.  Asked epoch by epoch (:func:`interval_epsilon_epochs`), each epoch is
:func:`.poisson_interval.epsilon` at T·e steps, bit for bit (``tests/engine/test_epochs.py`` compares them): its
one-step pmfs (the pessimistic connect-the-dots pmf, :func:`.pld.one_step`, and the dominated pmf,
:func:`.dominated_pld.one_step`) are kept per (σ, q, discretisation), so a new epoch builds only its compositions,
and a question asked before (the plain audit's row, the last epoch of a per-epoch table) finds its compositions
kept (:func:`.pld.composed`, :func:`.dominated_pld.composed`).  Every epoch of one run at one discretisation
(:func:`interval_epsilon_each_epoch`) shares one forward transform per direction and end, and one inverse transform
per direction and epoch for its two ends, instead.
"""

from __future__ import annotations

import math

from dp_accounting.pld import pld_pmf as _pmflib

from . import dominated_pld, pld, poisson_interval
from .numerics import norm2
from .reading import epsilon_for_delta_lower


def _one_step_upper(sigma: float, q: float, discretization: float):
    """:func:`.pld.pessimistic_pld`, from the package's one-step cache :func:`.pld.one_step` (treat as immutable)."""
    return pld.one_step(float(sigma), float(q), True, float(discretization))


def _one_step_lower(sigma: float, q: float, discretization: float, direction: str):
    """:func:`.dominated_pld.dominated_pmf` of one direction, from its one-step cache (treat as immutable)."""
    return dominated_pld.one_step(float(sigma), float(q), float(discretization), direction)


def interval_epsilon_epochs(delta, *, sigma, q, steps, epochs, direction="add_remove", rel_tol=1e-3,
                            finest_discretization=None, discretization=None):
    """:func:`.poisson_interval.epsilon` at ``steps``·e compositions for each e of ``epochs`` (epoch numbers, in
    order): a list of AccountingResult, each that function's (module docstring)."""
    return [poisson_interval.epsilon(float(delta), sigma=float(sigma), q=float(q), total_steps=int(steps) * int(e),
                                     direction=direction, rel_tol=rel_tol,
                                     finest_discretization=finest_discretization, discretization=discretization)
            for e in epochs]


def clear_caches():
    """Forget the kept one-step pmfs, the compositions of the interval's two ends and the kept intervals."""
    for f in (pld.one_step, pld.composed, pld._upper_pmfs, dominated_pld.one_step, dominated_pld.composed,  # noqa: SLF001
              poisson_interval._epsilon):  # noqa: SLF001
        f.cache_clear()


# --------------------------------------------------------------------------- every epoch at one discretisation
# The interval above refines the discretisation per epoch and composes T·e steps from scratch each time.  Asked
# for every epoch of one run, the epochs before the last are taken at the last epoch's discretisation d (its
# refinement reached the width there, and an earlier epoch's composition is narrower), from one transform per
# direction and end: the one-step pmf's transform raised to the power T once, then multiplied in once per epoch;
# a direction's two ends are transformed back together (:func:`_epoch_pmf_pair`).

def _chernoff_window(probs, tail_mass_truncation=pld.TAIL_MASS_TRUNCATION):
    """A function T -> (lower, upper): dp_accounting's window of the T-fold composition of ``probs``
    (``common.compute_self_convolve_bounds`` over its 40 orders), the same integers, as
    :func:`.pld._self_convolve_bounds` finds them: settled by its screen where the screen settles them (the screen's
    log-MGFs computed once for every T), else from dp_accounting's log-MGFs (``logsumexp`` rows) at the orders that
    can decide the window, each row computed once for every T that needs it."""
    import numpy as np
    from scipy import special

    n = len(probs)
    orders = np.concatenate((np.arange(-20, 0), np.arange(1, 21))) / n
    screen_mgf = pld._screen_log_mgf(probs)
    exact = {}  # order index -> dp_accounting's log-MGF row

    def window(num_times):
        screen = None if screen_mgf is None else pld._screen_bounds(screen_mgf, n, num_times, tail_mass_truncation)
        settled = None if screen is None else pld._settled_window(*screen, n, num_times)
        if settled is not None:
            return settled
        rows = np.arange(40) if screen is None or n < pld._SCREEN_MIN_SIZE else pld._kept_orders(*screen)
        missing = [int(r) for r in rows if int(r) not in exact]
        if missing:
            vals = special.logsumexp(np.outer(orders[missing], np.arange(n)), b=probs, axis=1)
            exact.update(zip(missing, vals))
        return pld.mgf_window(orders[rows], np.array([exact[int(r)] for r in rows]), n, num_times,
                              tail_mass_truncation)

    return window


def _epoch_error(probs, total_steps, epoch, steps, out, transform_len, norms=None):
    """A bound on the 2-norm of the rounding error of the masses ``out`` of the ``total_steps``-fold composition
    computed as F⁻¹((F p)^steps · … · (F p)^steps) (``epoch`` factors, F of length ``transform_len``).

    :func:`.numerics.fft_error` bounds the one-power computation (F p)^T; the product here differs only in the
    power's own rounding: ``epoch`` powers each with relative error r(steps) (numpy's z**steps: ≤ 3u·steps by
    squaring below 100, ≤ 6u(steps(π + 1) + 1) by cpow from there; the |log|z|| part of cpow sums over the
    factors to the same ≤ 6u/e absolute as for one power) and e − 1 complex multiplications (≤ 3u each, Higham
    Lemma 3.5), so the relative error of the product exceeds fft_error's r(T) by at most 9u·e + 6u; that excess
    times (‖c‖₂ + g·spread) with Young's spread T‖p‖₂‖p‖₁^{T−1} ≥ fft_error's is added."""
    from .numerics import UNIT_ROUNDOFF, fft_error

    s1, s2 = norms if norms is not None else (math.fsum(probs), norm2(probs))
    c2 = norm2(out) + pld.TAIL_MASS_TRUNCATION
    power = "cpow" if steps >= pld._CPOW_MIN_EXPONENT else "multiply"  # noqa: SLF001 - how _power raised it
    base = fft_error([(s1, s2, int(total_steps))], len(out), transform_len, out_norm2=c2, norm=2, power=power)
    u = UNIT_ROUNDOFF
    g = 8.0 * u * (math.log2(max(2, int(transform_len))) + 1.0)
    spread = total_steps * s2 * s1 ** (total_steps - 1)
    return base + (9.0 * u * epoch + 6.0 * u) * (c2 + g * spread)


def _epoch_pmfs(probs, lower_loss, d, steps, epochs, pessimistic, inf_mass, wanted=None):
    """[(DensePLDPmf, err2)] after each epoch 1 … ``epochs`` of ``steps`` compositions of the one-step pmf
    (``probs`` at losses (lower_loss + i)·d, ``inf_mass`` at +∞): dp_accounting's window and (pessimistic) +∞
    mass for each T = steps·e, the masses from one circular transform of the last epoch's length (a longer
    transform than T·e needs only folds less of the ≤ τ mass outside the window back in), err2 of
    :func:`_epoch_error`.  With ``wanted`` (a set of epochs) the other epochs' entries are None: their product
    is formed (the next epoch needs it) but not transformed back."""
    import numpy as np
    from scipy import fft

    window = _chernoff_window(probs)
    wins = [window(steps * e) for e in range(1, epochs + 1)]
    n_fft = fft.next_fast_len(max(max(up - lo + 1 for lo, up in wins), len(probs)))
    step_power = pld._power(fft.fft(probs, n_fft), steps)  # noqa: SLF001 - the engine's z**T
    acc = step_power
    norms = (math.fsum(probs), norm2(probs))
    out = []
    for e, (lo, up) in enumerate(wins, 1):
        t = steps * e
        if e > 1:
            acc = acc * step_power
        if wanted is not None and e not in wanted:
            out.append(None)
            continue
        if t == 1:  # one step: the pmf itself, no composition
            out.append((_pmflib.DensePLDPmf(d, lower_loss, np.asarray(probs), inf_mass, pessimistic), 0.0))
            continue
        full = np.real(fft.ifft(acc))
        out_len, start = up - lo + 1, lo % n_fft
        masses = np.concatenate((full[start:start + out_len], full[:max(0, out_len - (n_fft - start))]))
        inf = (pld.TAIL_MASS_TRUNCATION - math.expm1(t * math.log1p(-inf_mass))) if pessimistic else 0.0
        pmf = _pmflib.DensePLDPmf(d, lower_loss * t + lo, masses, inf, pessimistic)
        out.append((pmf, _epoch_error(probs, t, e, steps, masses, n_fft, norms)))
    return out


def _hermitian_half(spectrum, n_fft):
    """Entries 0 … ⌊N/2⌋ of a transform of real masses (N = ``n_fft``), the imaginary part of entry 0 (and N/2 for
    even N) set to 0: with their mirror images (:func:`_two_real_inverse`) an exactly Hermitian spectrum whose
    every entry is within the computed entry's error of the exact transform (the exact entries there are real)."""
    half = spectrum[:n_fft // 2 + 1].copy()
    half[0] = half[0].real
    if n_fft % 2 == 0:
        half[-1] = half[-1].real
    return half


def _two_real_inverse(a, b, n_fft, z=None):
    """(F⁻¹ ext(a), F⁻¹ ext(b)) by one complex inverse transform of ext(a) + i·ext(b), where ext is the Hermitian
    extension of a half spectrum (:func:`_hermitian_half`: entry N − k is the conjugate of entry k).  Each
    extension is exactly Hermitian, so its exact inverse is real: the real part of the result is the first's,
    the imaginary part the second's, and only the forming of the sum (one rounding per component) and the inverse
    transform's own rounding (relative to ‖ext(a) + i·ext(b)‖) mix the two (:func:`_pair_error`).  ``z``: a buffer
    of N complex entries to form the sum in (overwritten, and the result may live in it).  Hand-written: scipy's
    real inverse transform is another algorithm than the complex one :func:`.numerics.fft_error` bounds; this keeps
    the complex transform and halves how many are made."""
    import numpy as np
    from scipy import fft

    h = n_fft // 2
    z = np.empty(n_fft, dtype=complex) if z is None else z
    np.subtract(a.real, b.imag, out=z.real[:h + 1])
    np.add(a.imag, b.real, out=z.imag[:h + 1])
    ma, mb = a[n_fft - h - 1:0:-1], b[n_fft - h - 1:0:-1]  # entries N − k for k = h + 1 … N − 1
    np.add(ma.real, mb.imag, out=z.real[h + 1:])
    np.subtract(mb.real, ma.imag, out=z.imag[h + 1:])
    full = fft.ifft(z, overwrite_x=True)
    return full.real, full.imag


def _pair_error(own_norm2, other_norm2, transform_len):
    """What :func:`_two_real_inverse` adds to one output's error beyond :func:`_epoch_error` (which covers its own
    spectrum's error and an inverse transform of its own): the inverse transform's rounding, ≤ g‖x‖₂ for an exact
    output x = a + i·b with ‖x‖₂ ≤ ‖a‖₂ + ‖b‖₂ (g = 8u(log₂N + 1), as :func:`.numerics.fft_error`), so g‖b‖₂ more;
    the forming of ext(a) + i·ext(b), each component one addition rounded to within u of its two terms' moduli,
    ≤ u(|a_k| + |b_k|) per entry, i.e. ≤ u(‖a‖₂ + ‖b‖₂) after the inverse (Parseval), counted twice for the
    first-order terms.  ``own_norm2``, ``other_norm2``: the outputs' 2-norms (as :func:`_epoch_error`'s ‖c‖₂)."""
    from .numerics import UNIT_ROUNDOFF as u

    g = 8.0 * u * (math.log2(max(2, int(transform_len))) + 1.0)
    return g * other_norm2 + 2.0 * u * (own_norm2 + other_norm2)


def _epoch_pmf_pair(first, second, d, steps, epochs, wanted=None):
    """:func:`_epoch_pmfs` of two one-step pmfs (``first``, ``second``: (probs, lower_loss, pessimistic, inf_mass)),
    each epoch's two compositions from one inverse transform (:func:`_two_real_inverse`) of a common length (the
    longer of their windows: a longer transform only folds less of the ≤ τ mass outside a window back in), the
    epoch products formed on the half spectra.  The half spectrum's entries are those of the full transform
    (:func:`_hermitian_half`), and the mirrored ones carry the same error bound as their images, so each
    :func:`_epoch_error` holds for its extension; :func:`_pair_error` is added for the shared inverse."""
    import numpy as np
    from scipy import fft

    pmfs = (first, second)
    windows = [_chernoff_window(p[0]) for p in pmfs]
    wins = [[window(steps * e) for e in range(1, epochs + 1)] for window in windows]
    n_fft = fft.next_fast_len(max(max(up - lo + 1 for ws in wins for lo, up in ws), *(len(p[0]) for p in pmfs)))
    powers = [_hermitian_half(pld._power(fft.fft(p[0], n_fft), steps), n_fft) for p in pmfs]  # noqa: SLF001
    accs = [power.copy() for power in powers]
    norms = [(math.fsum(p[0]), norm2(p[0])) for p in pmfs]
    outs = ([], [])
    buffer = np.empty(n_fft, dtype=complex)
    for e in range(1, epochs + 1):
        t = steps * e
        if e > 1:
            for acc, power in zip(accs, powers):
                acc *= power
        if wanted is not None and e not in wanted:
            for out in outs:
                out.append(None)
            continue
        if t == 1:  # one step: the pmfs themselves, no composition
            for (probs, lower_loss, pessimistic, inf_mass), out in zip(pmfs, outs):
                out.append((_pmflib.DensePLDPmf(d, lower_loss, np.asarray(probs), inf_mass, pessimistic), 0.0))
            continue
        fulls = _two_real_inverse(accs[0], accs[1], n_fft, buffer)
        made = []
        for (probs, lower_loss, pessimistic, inf_mass), full, ws in zip(pmfs, fulls, wins):
            lo, up = ws[e - 1]
            out_len, start = up - lo + 1, lo % n_fft
            masses = np.concatenate((full[start:start + out_len], full[:max(0, out_len - (n_fft - start))]))
            inf = (pld.TAIL_MASS_TRUNCATION - math.expm1(t * math.log1p(-inf_mass))) if pessimistic else 0.0
            made.append((_pmflib.DensePLDPmf(d, lower_loss * t + lo, masses, inf, pessimistic), masses))
        c2 = [norm2(m) + pld.TAIL_MASS_TRUNCATION for _, m in made]
        for i, ((pmf, masses), (probs, *_), out) in enumerate(zip(made, pmfs, outs)):
            err = _epoch_error(probs, t, e, steps, masses, n_fft, norms[i]) + _pair_error(c2[i], c2[1 - i], n_fft)
            out.append((pmf, err))
    return outs


class _Reader:
    """ε(δ) of one dense pmf at several δ (:func:`epsilon_for_delta`), its running sums computed once, in blocks from
    the largest loss as far as a reading needs them: 8192 entries, then each block 4× the last; with ``first`` (the
    entries a reading is expected to walk, e.g. the previous epoch's :attr:`walked`) a first block of about that
    many, then blocks of 8192 doubling.  The sums are sequential (``np.cumsum``, each block continuing the last), so
    the blocks change only the work, not a bit of the readings.  :attr:`walked`: the most entries a reading walked."""

    def __init__(self, pmf, first=None):
        import numpy as np

        self.pmf, self.blocks = pmf, []
        self.probs = np.flip(pmf._probs)  # noqa: SLF001
        self.d, self.n = pmf._discretization, len(self.probs)  # noqa: SLF001
        self.inf = pmf._infinity_mass  # noqa: SLF001
        self.fallback = self.n == 0 or pmf._lower_loss * self.d < -700  # noqa: SLF001 - exp(−loss) could overflow
        block, self.growth = (8192, 4) if first is None else (max(8192, int(1.05 * first) + 2048), None)
        self.next = (self.inf, 0.0, (pmf._lower_loss + self.n - 1) * self.d, 0, block)  # noqa: SLF001
        self.walked = 0

    def _block(self, k):
        import numpy as np

        while len(self.blocks) <= k:
            upper, lower, first, start, block = self.next
            stop = min(self.n, start + block)
            steps = np.full(stop - start, -self.d)
            steps[0] = first
            losses = np.cumsum(steps)
            p = self.probs[start:stop]
            ups = np.cumsum(np.concatenate(([upper], p)))
            lows = np.cumsum(np.concatenate(([lower], np.exp(-losses) * p)))
            self.blocks.append((start, losses, ups, lows))
            if self.growth is None:  # after a first block of the expected walk: small steps beyond it
                nxt, self.growth = 8192, 2
            else:
                nxt = self.growth * block
            self.next = (ups[-1], lows[-1], losses[-1] - self.d, stop, nxt)
        return self.blocks[k]

    def epsilon(self, delta):
        import numpy as np

        if self.inf > delta:
            return math.inf
        if self.fallback:
            return pld.epsilon_for_delta(self.pmf, delta)
        k, upper, lower = 0, self.inf, 0.0
        while not (k == len(self.blocks) and self.next[3] >= self.n):  # until every entry is walked
            start, losses, ups, lows = self._block(k)
            u_before, l_before = ups[:-1], lows[:-1]
            valid = (u_before > delta) & (l_before > 0)
            ret = (ups[1:] >= delta) & (lows[1:] == 0)
            m = losses.size
            kr = int(np.argmax(ret)) if ret.any() else m
            kb = int(np.argmax(valid)) if valid.any() else m  # no break before the first valid entry
            while kb < m and kb <= kr:  # the break test from there on, in chunks, up to the first break (or ret)
                stop = min(m, kb + 4096)
                with np.errstate(divide="ignore", invalid="ignore"):
                    brk = valid[kb:stop] & (np.log((u_before[kb:stop] - delta) / l_before[kb:stop]) >= losses[kb:stop])
                if brk.any():
                    kb += int(np.argmax(brk))
                    break
                kb = stop
            self.walked = max(self.walked, start + min(kb, kr))
            if kr < kb:
                return max(0.0, float(losses[kr]))
            if kb < m:
                upper, lower = ups[kb], lows[kb]
                break
            upper, lower, k = ups[-1], lows[-1], k + 1
        if upper <= lower + delta:
            return 0.0
        if not lower > 0:
            return pld.epsilon_for_delta(self.pmf, delta)
        return math.log((upper - delta) / lower)


def epsilon_for_delta(pmf, delta):
    """ε(δ) of a dense pmf by dp_accounting 0.6's rule (``pld_pmf._get_epsilon_for_delta``: walking down from the
    largest loss, stop at the first loss ℓ with log((U − δ)/W) ≥ ℓ, U the mass so far (with +∞'s), W its Σ e^{−ℓ}p;
    ε = log((U − δ)/W)) on arrays, in blocks from the top (:class:`_Reader`): the same running sums (``np.cumsum``
    adds in dp_accounting's order), the exponentials by numpy (within an ulp of ``math.exp``);
    :func:`.pld.epsilon_for_delta` is the loop's float bit for bit, at the cost of a Python ``math.exp`` per
    entry walked."""
    return _Reader(pmf).epsilon(delta)


#: below this many losses above ε, :func:`_rounding_at` sums the weights themselves (:func:`.pld.rounding_at`)
GEOMETRIC_MIN = 64


def _rounding_at(pmf, err2, eps):
    """An upper bound on :func:`.pld.rounding_at` (what the δ(ε) of a pmf whose masses carry a rounding error of
    2-norm ≤ ``err2`` may be off by: ‖w‖₂·err2, w_j = 1 − e^{ε−ℓ_j} over the m losses ℓ_j > ε) from the closed
    form of its geometric sums instead of m exponentials: with ℓ_j = ℓ_0 + j·d, c = e^{ε−ℓ_0} and r = e^{−d},
    Σ w_j² = m − 2c(1 − r^m)/(1 − r) + c²(1 − r^{2m})/(1 − r²).  Valid because the evaluation's rounding (a few
    operations of terms ≤ m + 2c·S₁ + c²·S₂, far below the 1e-12 of them allowed) and the grid's (each float loss
    within 2 ulps of ℓ_0 + j·d, so each weight within that of the geometric one: ≤ 4·2⁻⁵²·max|ℓ| per weight, √m of
    them in the 2-norm) are added.  Hand-written: no library sums these weights without forming each one."""
    lower, d, n = pmf._lower_loss, pmf._discretization, len(pmf._probs)  # noqa: SLF001
    eps = float(eps)
    if not math.isfinite(eps):
        return pld.rounding_at(pmf, err2, eps)
    k = pld._first_above(lower, d, n, eps)  # noqa: SLF001
    m = n - k
    if m < GEOMETRIC_MIN:
        return pld.rounding_at(pmf, err2, eps)
    first, top = float(k + lower) * d, float(n - 1 + lower) * d
    c = math.exp(eps - first)
    s1 = math.expm1(-m * d) / math.expm1(-d)
    s2 = math.expm1(-2.0 * m * d) / math.expm1(-2.0 * d)
    squares = m - 2.0 * c * s1 + c * c * s2
    slack = 1e-12 * (m + 2.0 * c * s1 + c * c * s2)
    grid = 4.0 * 2.0**-52 * max(abs(first), abs(top)) * math.sqrt(m)
    return (math.sqrt(max(0.0, squares) + slack) + grid) * float(err2)


def _error_at(pmf, err2, total_steps, eps):
    """:func:`.dominated_pld._error_at` (the folded mass τ and the rounding) with the rounding of
    :func:`_rounding_at`."""
    if total_steps == 1:
        return 0.0
    return dominated_pld.FOLD_MASS + _rounding_at(pmf, err2, eps)


def _dense(pmf):
    return pmf if isinstance(pmf, _pmflib.DensePLDPmf) else pmf.to_dense_pmf()


def interval_epsilon_each_epoch(delta, *, sigma, q, steps, epochs, discretization, direction="add_remove",
                                rel_tol=1e-3, wanted=None):
    """[lower, upper] on ε(δ) after each epoch 1 … ``epochs`` of ``steps`` compositions, all at one
    ``discretization`` d: a list of AccountingResult as :func:`.poisson_interval.epsilon` makes them (None for an
    epoch not in ``wanted``, where given: its composition is passed through, not read).

    upper: per direction the pessimistic connect-the-dots one-step pmf (:func:`.pld.pessimistic_pld`, it
    dominates the true pair), composed (:func:`_epoch_pmf_pair`: dp_accounting's window, the truncated tail at +∞)
    and read as :func:`.pld.certified_epsilon` reads it, with the rounding bound of :func:`_epoch_error` and
    :func:`_pair_error` (its weights' norm from :func:`_rounding_at`); lower: the dominated one-step pmf
    (:func:`.dominated_pld.dominated_pmf`), composed with the upper pmf of its direction, no +∞ mass, read as
    :func:`.dominated_pld.epsilon` reads it (the folded mass τ and the rounding added to δ).
    q < 1 and δ at or above the PLD reliability floor (the caller asks :func:`.poisson_interval.epsilon` else).
    """
    s, q, d, dlt = float(sigma), float(q), float(discretization), float(delta)
    steps, epochs = int(steps), int(epochs)
    wanted = None if wanted is None else {int(e) for e in wanted}
    ups, lows = [], []
    uppers = [_dense(pmf) for pmf in pld.direction_pmfs(_one_step_upper(s, q, d), direction)]
    lowers = [_one_step_lower(s, q, d, dd) for dd in dominated_pld._directions(direction)]  # noqa: SLF001
    for up_pmf, lo_pmf in zip(uppers, lowers):  # one direction's two ends share each inverse transform
        up, lo = _epoch_pmf_pair((up_pmf._probs, up_pmf._lower_loss, True, up_pmf._infinity_mass),  # noqa: SLF001
                                 (lo_pmf._probs, lo_pmf._lower_loss, False, 0.0), d, steps, epochs, wanted)  # noqa: SLF001
        ups.append(up)
        lows.append(lo)
    walked = {}  # (end, direction) -> entries the last epoch's readings walked: the next epoch's first block
    out = []
    for e in range(epochs):
        if ups[0][e] is None:
            out.append(None)
            continue
        t = steps * (e + 1)
        up = -math.inf
        for i, per in enumerate(ups):
            pmf, err2 = per[e]
            read = _Reader(pmf, walked.get(("up", i)))
            eps0 = float(read.epsilon(dlt))
            target = dlt - _rounding_at(pmf, err2, eps0) if math.isfinite(eps0) else 0.0
            up = max(up, float(read.epsilon(target)) if target > 0 else math.inf)
            walked["up", i] = read.walked
        lo = -math.inf
        for i, per in enumerate(lows):
            pmf, err2 = per[e]
            read = _Reader(pmf, walked.get(("lo", i)))
            eps0 = float(read.epsilon(dlt + _error_at(pmf, err2, t, -math.inf)))
            lo = max(lo, eps0, float(read.epsilon(dlt + _error_at(pmf, err2, t, eps0))))
            walked["lo", i] = read.walked
        width = (up - lo) / up if up > 0 else 0.0
        out.append(poisson_interval._with_cf(lo, up, d, {d: width}, poisson_interval.cf.accounting_epsilon,  # noqa: SLF001
                                             dlt, s, q, t, direction, rel_tol))
    return out


# --------------------------------------------------------------------------- random allocation (balls-and-bins)

def allocation_epsilon_each_epoch(delta, *, sigma, steps, epochs, step, loss_step, tail):
    """[(lower, upper)] on ε(δ) of random allocation after each epoch 1 … ``epochs`` (max over ADD and REMOVE),
    from one epoch's laws at grid step ``step`` (:func:`.allocation.epoch_laws`, truncation budget ``tail``; the
    upper law dominates one epoch, the lower one is dominated) composed one epoch at a time
    (:func:`.allocation._compose`: each convolution's FFT rounding goes to +∞ for the upper end and is carried and
    subtracted for the lower end, each truncated tail goes to +∞ (upper) or is dropped (lower)), read by
    :func:`.allocation.epsilon_of` (the lower end by :func:`.allocation.epsilon_lower_of`, a proven float guard).
    Each end is valid for the reasons :mod:`.allocation` gives for its E-fold
    products, at any grid step, loss step and budget; the last epoch's settings make the earlier epochs at least
    as fine."""
    from . import allocation as al

    up_law, lo_law = al.epoch_laws(float(sigma), int(steps), float(step), float(tail))
    ups, lows = al.upper_pmfs(up_law, float(step)), al.lower_pmfs(lo_law, float(loss_step))
    acc_u, acc_l = list(ups), list(lows)
    out = []
    for e in range(1, int(epochs) + 1):
        if e > 1:
            acc_u = [al._compose(a, p, True, tail) for a, p in zip(acc_u, ups)]  # noqa: SLF001
            acc_l = [al._compose(a, p, False, tail) for a, p in zip(acc_l, lows)]  # noqa: SLF001
        out.append((max(al.epsilon_lower_of(p, float(delta)) for p in acc_l),
                    max(al.epsilon_of(p, float(delta)) for p in acc_u)))
    return out


# --------------------------------------------------------------------------- a dominated one-epoch pmf, every epoch

def lower_epsilon_each_epoch(delta, pmfs, epochs):
    """{epoch: (ε, per direction)} lower bounds on ε(δ) after each epoch 1 … ``epochs`` for one-epoch pmfs that are
    dominated by the true pair (optimistic, no +∞ mass; ``pmfs``: direction -> DensePLDPmf, one discretisation): each
    composed (:func:`_epoch_pmfs`; two directions share each inverse transform, :func:`_epoch_pmf_pair`) and read as
    :func:`.dominated_pld.epsilon` reads its compositions (the folded mass τ and the rounding bound added to δ);
    epoch 1 is the pmf itself."""
    names = list(pmfs)
    specs = [(p._probs, p._lower_loss, False, 0.0) for p in pmfs.values()]  # noqa: SLF001
    d = pmfs[names[0]]._discretization  # noqa: SLF001
    if len(specs) == 2:
        rows = _epoch_pmf_pair(*specs, d, 1, int(epochs))
    else:
        rows = [_epoch_pmfs(probs, lower, d, 1, int(epochs), False, 0.0) for probs, lower, _, _ in specs]
    per = {}
    for name, composed in zip(names, rows):
        out, walked = [], None
        for e, (comp, err2) in enumerate(composed, 1):
            reader = _Reader(comp, walked)  # both readings share its sums; a shifted pmf is read afresh

            def read(pmf, dlt, reader=reader, comp=comp):
                return reader.epsilon(dlt) if pmf is comp else epsilon_for_delta(pmf, dlt)

            eps0 = epsilon_for_delta_lower(comp, float(delta) + _error_at(comp, err2, e, -math.inf), read)
            out.append(max(0.0, eps0, epsilon_for_delta_lower(comp, float(delta) + _error_at(comp, err2, e, eps0),
                                                              read)))
            walked = reader.walked
        per[name] = out
    return {e: (max(v[e - 1] for v in per.values()), {k: v[e - 1] for k, v in per.items()})
            for e in range(1, int(epochs) + 1)}

"""PLD_accounting's own certified PLDs of the balls-and-bins (allocation) scheme, the independent reference that
tests/engine/test_allocation.py and tests/samplers/test_balls_and_bins.py both check against.  Each pair costs
seconds to tens of seconds of CPU, so a pair is built once per session (memoised) and shared by every test that
asks for the same settings; tests only read them (get_epsilon_for_delta / get_delta_for_epsilon)."""

import functools

#: the reference settings both modules use: PLD_accounting's GEOM convolution at loss step 1e-2, tail 1e-12 (its
#: defaults; a smaller tail than the 1e-3 δ a single query needs only narrows the certified pair)
LOSS_STEP = 1e-2
TAIL = 1e-12


def allocation_plds(sigma, steps, epochs, loss_discretization=LOSS_STEP, tail_truncation=TAIL,
                    bounds=("lower", "upper")):
    """{"lower": IS_DOMINATED PLD, "upper": DOMINATES PLD} (only the ``bounds`` asked for) of σ, T steps, E epochs."""
    return {b: _pld(float(sigma), int(steps), int(epochs), float(loss_discretization), float(tail_truncation), b)
            for b in bounds}


@functools.cache  # keyed on the normalised arguments: every spelling of the same settings shares one PLD
def _pld(sigma, steps, epochs, loss_discretization, tail_truncation, bound):
    from PLD_accounting import (
        AllocationSchemeConfig,
        BoundType,
        ConvolutionMethod,
        PrivacyParams,
        gaussian_allocation_pld,
    )

    cfg = AllocationSchemeConfig(convolution_method=ConvolutionMethod.GEOM, loss_discretization=loss_discretization,
                                 tail_truncation=tail_truncation)
    params = PrivacyParams(sigma=sigma, num_steps=steps, num_epochs=epochs)
    bound_type = {"lower": BoundType.IS_DOMINATED, "upper": BoundType.DOMINATES}[bound]
    return gaussian_allocation_pld(params=params, config=cfg, bound_type=bound_type)

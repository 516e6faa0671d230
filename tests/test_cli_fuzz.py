"""Fuzz test of the command line: every sampler × command with NaN, ±inf, 0, negative, huge, string
and missing values for each flag.  Always: exit code 0 with one JSON line whose value is in its valid
range, or exit code 2 (bad input) / 1 (accuracy failure) with exactly one line on stderr; never a
traceback, never longer than TIME_LIMIT seconds.  The case list is fixed (seeded); most cases run
in-process (cli.main, with an alarm as the time limit), a sample as real subprocesses."""

import argparse
import itertools
import json
import math
import random
import re
import signal
import subprocess
import sys

import pytest

from dpsampling import cli
from dpsampling.samplers import poisson

TIME_LIMIT = 60  # seconds per call; the feasibility check must answer long before
SAMPLERS = ("poisson", "wor", "shuffle", "deterministic", "balls_and_bins")
COMMANDS = ("epsilon", "delta", "sigma")
BAD = ("nan", "inf", "-inf", "0", "-1", "1e9", "1e300", "abc", "")
VALID_RANGE = {"epsilon": lambda v: v >= 0, "delta": lambda v: 0 <= v <= 1, "sigma": lambda v: 0 < v < math.inf}


def base_args(command, sampler):
    """A valid, cheap call, two epochs (shuffle/deterministic/balls_and_bins have one batch per step: q = 1/steps;
    balls_and_bins at 5 steps, as PLD_accounting takes seconds per call: a σ query ~1.6 s of CPU, ~4.6 s at 10)."""
    steps = 5 if sampler == "balls_and_bins" else 100
    q = "0.2" if sampler == "balls_and_bins" else "0.01"
    args = {"--sampler": sampler, "--q": q, "--steps": str(steps), "--epochs": "2", "--rel-tol": "0.01"}
    if command != "sigma":
        args["--sigma"] = "1.5"
    if command in ("epsilon", "sigma"):
        args["--delta"] = "1e-5"
    if command in ("delta", "sigma"):
        args["--epsilon"] = "2"
    return args


def argv(command, args):
    return [command, *itertools.chain.from_iterable((k, v) for k, v in args.items() if v is not None)]


RNG = random.Random(2026)


def cases():
    out = []
    for command, sampler in itertools.product(COMMANDS, SAMPLERS):
        base = base_args(command, sampler)
        out.append(argv(command, base))
        for flag in base:
            if flag == "--sampler":
                continue
            # a fixed (seeded) 5 of the 9 values per flag keeps the test cheap (2 for balls_and_bins: seconds per call)
            for bad in RNG.sample(BAD, 2 if sampler == "balls_and_bins" else 5):
                out.append(argv(command, {**base, flag: bad}))
            out.append(argv(command, {**base, flag: None}))  # missing flag
    # balls_and_bins Monte Carlo and max statistic, with bad MC settings
    mc = {**base_args("delta", "balls_and_bins"), "--method": "montecarlo", "--mc-samples": "2000", "--mc-seed": "1",
          "--mc-failure-prob": "0.05"}
    out.append(argv("delta", mc))
    for flag in ("--mc-samples", "--mc-seed", "--mc-failure-prob"):
        for bad in RNG.sample(BAD, 3):
            out.append(argv("delta", {**mc, flag: bad}))
    out.append(argv("epsilon", {**base_args("epsilon", "balls_and_bins"), "--method": "max_statistic"}))
    # inputs that are valid but far too big for a laptop: the CLI must say so up front
    for command in COMMANDS:
        big = base_args(command, "poisson")
        out.append(argv(command, {**big, "--steps": "1000000000", "--q": "0.001"}))
        out.append(argv(command, {**big, "--sigma": "0.001", "--q": "0.5"} if command != "sigma" else
                        {**big, "--epsilon": "99", "--q": "1", "--steps": "1000"}))
        out.append(argv(command, {**big, "--sigma": "100", "--q": "1", "--steps": "1000000000"} if command != "sigma"
                        else {**big, "--steps": "1000000000"}))
    return out


CASES = cases()
SUBPROCESS_SAMPLE = random.Random(12).sample(range(len(CASES)), 6)


class Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise Timeout


def _real_flags(command):
    sub = next(a for a in cli._parser()._actions if isinstance(a, argparse._SubParsersAction))
    return set(sub.choices[command]._option_string_actions)


#: bad input (exit 2) is one line naming a real flag and what it may be: "--flag must be <range> (got ...)",
#: "--flag is missing: it must be <range>" (never "(got None)"),
#: argparse's "argument --flag: invalid ... (choose from ...)" / "the following arguments are required: --flag",
#: or a cost refusal naming the flags to change and --force
BAD_INPUT = [re.compile(r"^dpsampling: error: (--[a-z-]+) must be \S.* \(got .*\)"),
             re.compile(r"^dpsampling: error: (--[a-z-]+) is missing: it must be \S.*"),
             re.compile(r"^dpsampling: error: argument (--[a-z-]+): (invalid|expected) .+"),
             re.compile(r"^dpsampling: error: the following arguments are required: (--[a-z-]+)"),
             re.compile(r"^dpsampling: error: .*(?:would take .+ \(limit \d+ s\)|laptop).*; change (--[a-z-]+) .*")]


def check_outcome(command, code, out, err, args):
    if code == 0:
        lines = out.strip().splitlines()
        assert len(lines) == 1 and not err.strip(), (args, out, err)
        d = json.loads(lines[0])
        value = d["value"] if d["kind"] != "lower" else d["lower"]  # a one-sided lower answer: value null
        assert isinstance(value, (int, float)) and VALID_RANGE[command](value), (args, value)
        assert (d["value"] is None) == (d["kind"] == "lower"), (args, d)  # value is never a lower end
    else:
        assert code in (1, 2), (args, code, err)
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1, (args, err)
        assert err.startswith("dpsampling: error: "), (args, err)
        assert not out.strip(), (args, out)
    if code == 2:
        match = next((m for m in (p.match(err.strip()) for p in BAD_INPUT) if m), None)
        assert match is not None, (args, err)
        assert match.group(1) in _real_flags(command), (args, err)


@pytest.mark.parametrize("args", CASES, ids=[" ".join(a) for a in CASES])
def test_cli_fuzz_in_process(args, capsys):
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(TIME_LIMIT)
    try:
        try:
            code = cli.main(list(args))
        except SystemExit as e:  # argparse: missing flag, bad type or choice
            code = e.code
    except Timeout:
        pytest.fail(f"no answer within {TIME_LIMIT} s: {args}")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    cap = capsys.readouterr()
    check_outcome(args[0], code, cap.out, cap.err, args)


@pytest.mark.parametrize("i", SUBPROCESS_SAMPLE)
def test_cli_fuzz_subprocess(i):
    args = CASES[i]
    out = subprocess.run([sys.executable, "-m", "dpsampling.cli", *args], capture_output=True, text=True,
                         timeout=TIME_LIMIT + 30)
    check_outcome(args[0], out.returncode, out.stdout, out.stderr, args)


@pytest.mark.parametrize("args", [
    ["epsilon", "--sigma", "0.001", "--q", "0.5", "--steps", "1000", "--delta", "1e-6"],  # measured > 5 GB
    ["epsilon", "--sigma", "0.8", "--q", "0.001", "--steps", "1000000000", "--delta", "1e-6"],  # > 60 s
    ["delta", "--sigma", "100", "--q", "1", "--steps", "1000000000", "--epsilon", "1"],  # > 60 s
    ["sigma", "--epsilon", "1", "--delta", "1e-6", "--q", "0.01", "--steps", "1000000000"],  # T over the PLD limit
])
def test_infeasible_inputs_are_refused_up_front(args, capsys):
    """No PLD is built: the size estimate alone refuses (exit 2, one line naming the limit)."""
    code = cli.main(args)
    err = capsys.readouterr().err
    assert code == 2 and "laptop" in err and len(err.strip().splitlines()) == 1, err


def test_size_estimate_orders_inputs():
    """The estimate grows as σ shrinks, as q grows and as T grows, and a typical run is well inside the limit."""
    typical, _ = poisson.pld_size_estimate(0.8, 1e-3, 10_000)
    assert typical < poisson.FEASIBLE_POINTS / 10
    assert poisson.pld_size_estimate(0.4, 1e-3, 10_000)[0] > typical
    assert poisson.pld_size_estimate(0.8, 1e-2, 10_000)[0] > typical
    assert poisson.pld_size_estimate(0.8, 1e-3, 100_000)[0] > typical
    assert poisson.pld_size_estimate(1e-3, 0.5, 1000)[0] > poisson.FEASIBLE_POINTS

"""Reading a run of phases (dpsampling/phases_io.py): CSV, YAML and --phase flags give the same Phases; every error
names the file, the row and the key."""

import pytest

from dpsampling import phases_io
from dpsampling.engine.errors import ParameterError
from dpsampling.phases import Phase

RUN = [Phase("poisson", 1.1, 0.0042, 7050, 1), Phase("wor", 0.9, 0.01, 235, 3)]


def test_csv_yaml_and_flags_agree(tmp_path):
    csv = tmp_path / "run.csv"
    csv.write_text("# a schedule\nsampler,sigma,q,steps,epochs\npoisson,1.1,0.0042,7050,\n\nwor, 0.9 ,1e-2,235,3\n")
    yml = tmp_path / "run.yaml"
    yml.write_text("phases:\n  - {sampler: poisson, sigma: 1.1, q: 0.0042, steps: 7050}\n"
                   "  - {sampler: wor, sigma: 0.9, q: 1e-2, steps: 235, epochs: 3}\n")  # 1e-2: a string in YAML 1.1
    flags = [phases_io.parse_flag("sampler=poisson,sigma=1.1,q=0.0042,steps=7050", 1)[0],
             phases_io.parse_flag("sampler=wor,sigma=0.9,q=0.01,steps=235,epochs=3", 2)[0]]
    a, origins = phases_io.read_file(csv)
    assert a == RUN and origins == ["line 3", "line 5"]
    assert phases_io.read_file(yml)[0] == RUN and flags == RUN
    bare = tmp_path / "bare.yml"
    bare.write_text("- {sampler: poisson, q: 0.0042, steps: 7050}\n")  # σ left out: the phase sigma --scale 0 sets
    assert phases_io.read_file(bare)[0] == [Phase("poisson", None, 0.0042, 7050, 1)]


@pytest.mark.parametrize("suffix,text,words", [
    ("csv", "sampler,sigma,q,steps\npoisson,abc,0.1,10\n", "line 2, key sigma: must be a number (got 'abc')"),
    ("csv", "sampler,sigma,q,step\npoisson,1,0.1,10\n", "line 1 (the header), key step: unknown column"),
    ("csv", "sampler,sigma,q,steps\npoisson,1,0.1\n", "line 2: has 3 cells, the header 4"),
    ("csv", "sampler,sigma,q,steps\npoisson,1,0.1,2.5\n", "line 2, key steps: must be an integer (got '2.5')"),
    ("csv", "sampler,sigma,steps\npoisson,1,10\n", "line 2, key q: is missing"),
    ("csv", "sampler,sigma,q,steps\n", "has no phases"),
    ("yaml", "- {sampler: poisson, sigma: 1, q: 0.1, steps: true}\n",
     "entry 1, key steps: must be an integer (got True)"),
    ("yaml", "- [poisson, 1, 0.1, 10]\n", "entry 1: must be a mapping"),
    ("yaml", "phases: 3\n", "must hold a list of phases"),
    ("yaml", "- {sampler: poisson, sigma: 1, q: 0.1, steps: 10, epoch: 2}\n", "entry 1, key epoch: unknown key"),
    ("yaml", "- {sampler: poisson, sigma: 1, q: .inf, steps: 10}\n", "key q: must be a finite number"),
    ("yaml", "[: bad", "is not valid YAML"),
])
def test_file_errors_name_file_row_and_key(tmp_path, suffix, text, words):
    """A CSV error names its line and key, a YAML one its entry and key; both the file and the parameter phases."""
    f = tmp_path / f"run.{suffix}"
    f.write_text(text)
    with pytest.raises(ParameterError) as exc:
        phases_io.read_file(f)
    assert exc.value.param == "phases" and str(exc.value).startswith(f"phases file {f}") and words in str(exc.value)


@pytest.mark.parametrize("text,words", [
    ("sampler=poisson,sigma=1,q=0.1", "key steps: is missing"),
    ("sampler=poisson,sigma=1,q=0.1,steps=10,sigma=2", "key sigma: is given twice"),
    ("poisson,sigma=1", "key poisson: must be key=value"),
])
def test_flag_errors_name_the_flag(text, words):
    with pytest.raises(ParameterError) as exc:
        phases_io.parse_flag(text, 2)
    assert exc.value.param == "phase" and str(exc.value).startswith(f"phase #2 ({text})") and words in str(exc.value)


def test_where_names_the_row_of_a_phase_error():
    origins = ["line 2", "line 3"]
    assert phases_io.where(origins, "phase 1 (wor): q must be in (0, 1]") == "phase 1 at line 3 (wor): q must be in (0, 1]"
    assert phases_io.where(origins, "phase 7 (wor): x") == "phase 7 (wor): x"  # no such row: as it is
    assert phases_io.where(origins, "delta must be in (0, 1)") == "delta must be in (0, 1)"


def test_unreadable_file():
    with pytest.raises(ParameterError, match="phases file /nonexistent/run.csv: cannot be read"):
        phases_io.read_file("/nonexistent/run.csv")

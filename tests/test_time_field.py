"""The rate and time fields: written as compare.js writes each form a harness sends, read back exactly."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from benchgate import results
from benchgate.errors import InputError
from benchgate.results import csvfile

HEADER = '"binary","filename","configuration","rate","time"\n'


def node_time_string(nanoseconds: int) -> str:
    """Decimal seconds with 9 fraction digits, the form Node's harness sends since v16.1.0."""
    whole, fraction = divmod(nanoseconds, 10**9)
    return f"{whole}.{fraction:09d}"


# (the report's JSON time, what compare.js's template literal writes)
WRITTEN = [
    ("0.003866894", "0.003866894"),  # current harness: verbatim, not through a float
    ("1.000000000", "1.000000000"),  # keeps its zeros
    ("0.000000000", "0.000000000"),  # NODEJS_BENCHMARK_ZERO_ALLOWED
    ("123456789.123456789", "123456789.123456789"),  # more digits than a double holds
    (0.003866894, "0.003866894"),  # legacy harness: a number, as JavaScript prints it
    (1e-9, "1e-9"),
    (1.23e-7, "1.23e-7"),
    (5, "5"),
    (0.1 + 0.2, "0.30000000000000004"),
    ("1e-9", "1e-9"),  # a number in text form is still a number
]


@pytest.mark.parametrize(("sent", "written"), WRITTEN)
def test_time_is_written_as_compare_js_writes_it(sent, written):
    line = results.format_sample_line("new", "a/b.js", "n=1", 12.5, sent)
    assert line == f'"new","a/b.js","n=1",12.5,{written}\n'


@pytest.mark.parametrize(("sent", "written"), [(1234.5, "1234.5"), ("12345.67", "12345.67"), (1e21, "1e+21")])
def test_rate_is_written_as_compare_js_writes_it(sent, written):
    """h2load's rate arrives as a string (written verbatim), the others as numbers."""
    assert results.format_sample_line("old", "a.js", "", sent, "1.5") == f'"old","a.js","",{written},1.5\n'


@pytest.mark.parametrize(
    "bad", ["5,.123456789", 'a"b', "1\n2", "NaN", "Infinity", "", " 1", "1e999", "0x10", "1_0", None, True, [1]]
)
def test_a_value_that_would_corrupt_the_csv_is_never_written(bad, tmp_path):
    assert results.field_text(bad) is None
    with pytest.raises(ValueError, match="time"):
        results.format_sample_line("old", "a.js", "", 1.0, bad if bad is not None else float("nan"))
    with pytest.raises(ValueError, match="rate"):
        results.format_sample_line("old", "a.js", "", bad, "1.0")
    path = tmp_path / "results.csv"
    with results.ResultsWriter(path) as writer, pytest.raises(ValueError):
        writer.append("old", "a.js", "", 1.0, bad if bad is not None else float("nan"))
    assert path.read_text() == HEADER


def test_a_missing_time_is_an_empty_field_that_reads_back_as_missing(tmp_path):
    path = tmp_path / "results.csv"
    with results.ResultsWriter(path) as writer:
        writer.append("old", "a.js", "n=1", 10.0, None)
        writer.append("new", "a.js", "n=1", 11.0, "0.250000000")
    assert path.read_text() == HEADER + '"old","a.js","n=1",10,\n"new","a.js","n=1",11,0.250000000\n'
    samples = results.read_samples([path])
    assert samples["time"].isna().tolist() == [True, False]
    assert samples["time_ns"].isna().tolist() == [True, False]
    assert samples["time_ns"][1] == 250_000_000


def _write_times(path: Path, times: list[str | None]) -> None:
    with results.ResultsWriter(path) as writer:
        for index, text in enumerate(times):
            writer.append("old" if index % 2 else "new", "a.js", "", 1.0, text)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 2**63 - 1), min_size=1, max_size=30), st.booleans())
@example([2**63 - 1, 1234567890123456789, 9999999999, 1, 0], False)
@example([1234567890123456789], True)
def test_nanosecond_time_strings_round_trip_exactly(tmp_path_factory, nanoseconds, with_missing):
    """Up to 19 digits (int64's range): the nanoseconds read equal the decimal written, a missing time or not."""
    path = tmp_path_factory.mktemp("times") / "results.csv"
    texts = [node_time_string(value) for value in nanoseconds]
    _write_times(path, texts + ([None] if with_missing else []))
    written = [line.rsplit(",", 1)[1] for line in path.read_text().splitlines()[1:]]
    assert written == texts + ([""] if with_missing else [])
    samples = results.read_samples([path])
    assert [int(value) for value in samples["time_ns"][: len(texts)]] == nanoseconds
    for value, text, seconds in zip(nanoseconds, texts, samples["time"], strict=False):
        if value < 2**53:  # within a double's integers the seconds are float(text) exactly
            assert seconds == float(text)
        else:
            assert seconds == pytest.approx(float(text), rel=2**-52)
    assert samples["time_ns"].isna().tolist() == [False] * len(texts) + ([True] if with_missing else [])


@pytest.mark.parametrize(
    ("text", "nanoseconds"),
    [
        ("1e-9", 1),
        ("1.23e-7", 123),
        ("0.0038668939999999997", 3866894),  # a legacy float: rounded to the nanosecond
        ("5", 5_000_000_000),
        (".5", 500_000_000),
        ("5.", 5_000_000_000),
        ("0.0000000005", 0),  # half to even
        ("0.0000000015", 2),
        ("99999999999.000000001", None),  # beyond int64 nanoseconds (292 years): NA, seconds still read
    ],
)
def test_legacy_number_forms_read_to_the_nearest_nanosecond(tmp_path, text, nanoseconds):
    path = tmp_path / "results.csv"
    path.write_text(HEADER + f'"old","a.js","",1,{text}\n"new","a.js","",1, {text}\n')
    samples = results.read_samples([path])
    read_back = [None if value is pd.NA else int(value) for value in samples["time_ns"].tolist()]
    assert read_back == [nanoseconds] * 2
    assert samples["time"].tolist() == [float(text)] * 2


def test_times_read_as_their_float_and_their_exact_nanoseconds(tmp_path):
    texts = ["0.003866894", "1e-9", "12345678901.5", " 7", "1.000000000", "0.30000000000000004", "999999.999999999"]
    path = tmp_path / "results.csv"
    path.write_text(HEADER + "".join(f'"old","a.js","",1,{time}\n' for time in texts))
    samples = results.read_samples([path])
    assert samples["time"].tolist() == [float(t) for t in texts]
    nanoseconds = [3866894, 1, pd.NA, 7_000_000_000, 1_000_000_000, 300_000_000, 999_999_999_999_999]
    assert samples["time_ns"].tolist() == nanoseconds  # 12345678901.5 s is past int64's nanoseconds


@pytest.mark.parametrize("bad", ["5,.123456789", "NaN", "soon", "1e999", "1_000"])
def test_a_time_that_is_not_a_number_is_an_error_naming_its_line(tmp_path, bad):
    path = tmp_path / "results.csv"
    path.write_text(HEADER + '"old","a.js","",1,1\n' + f'"new","a.js","",1,"{bad}"\n')
    with pytest.raises(InputError, match=r"line 3: time '.*' is not a finite number"):
        results.read_samples([path])


def test_nanoseconds_helper_refuses_what_is_not_a_number():
    assert csvfile.nanoseconds("abc") is None
    assert csvfile.nanoseconds("1e400") is None
    assert csvfile.nanoseconds(" 2.5 ") == 2_500_000_000

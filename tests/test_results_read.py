"""read_samples: every form of compare.js CSV we accept, and a precise one-line error for everything else."""

from __future__ import annotations

import io
import json
import re
import shutil
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchgate import results
from benchgate.cli import main
from benchgate.errors import InputError

FIXTURES = Path(__file__).parent / "fixtures" / "analyze"
HEADER = '"binary","filename","configuration","rate","time"\n'


def write(tmp_path: Path, text: str | bytes, name: str = "results.csv") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return path


def read(*paths: Path | str, **labels: str) -> pd.DataFrame:
    return results.read_samples([str(path) for path in paths], **labels)


def as_records(samples: pd.DataFrame) -> list[tuple]:
    return list(
        zip(
            samples["side"].astype(str),
            samples["filename"].astype(str),
            samples["configuration"].astype(str),
            samples["rate"],
            strict=True,
        )
    )


def error_of(tmp_path: Path, text: str | bytes, **labels: str) -> str:
    path = write(tmp_path, text)
    with pytest.raises(InputError) as caught:
        read(path, **labels)
    message = caught.value.one_line()
    assert "\n" not in message and message.startswith(f"{path}: ")
    return message[len(f"{path}: ") :]


def test_canonical_fixture_reads_every_row_with_quotes_undoubled():
    samples = read(FIXTURES / "quoting.csv")
    assert list(samples.columns) == results.SAMPLE_COLUMNS
    assert len(samples) == 192  # 8 configurations x 2 binaries x 12 runs, header excluded
    configurations = set(samples["configuration"].astype(str))
    raw = (FIXTURES / "quoting.csv").read_text()
    assert '"type=""a,b"" n=10"' in raw and '"type=""""quoted"""" n=1"' in raw
    # RFC 4180: a doubled quote inside a quoted field is one quote.
    assert 'type="a,b" n=10' in configurations and 'type=""quoted"" n=1' in configurations
    assert "sep=, end=," in configurations and "  leading and trailing  " in configurations and "" in configurations
    assert samples["side"].value_counts().to_dict() == {"base": 96, "head": 96}
    assert samples["time"].notna().all()


@pytest.mark.parametrize("variant", ["crlf-bom", "old-header", "no-time", "blank-lines"])
def test_encoding_variants_hold_the_same_samples(variant):
    canonical = read(FIXTURES / "quoting.csv")
    other = read(FIXTURES / f"quoting-{variant}.csv")
    assert as_records(other) == as_records(canonical)
    assert other["time"].isna().all() if variant == "no-time" else np.allclose(other["time"], canonical["time"])


def test_old_header_with_spaces_after_separators(tmp_path):
    text = '"binary", "filename", "configuration", "rate", "time"\n"old", "a.js", "n=1, m=2", 10.5, 0.1\n'
    samples = read(write(tmp_path, text))
    assert as_records(samples) == [("base", "a.js", "n=1, m=2", 10.5)]


def test_unquoted_header_and_fields_and_extra_columns_are_fine(tmp_path):
    text = "binary,filename,configuration,rate,time,extra\nnew,a.js,n=1,3e5,0.25,whatever\n"
    assert as_records(read(write(tmp_path, text))) == [("head", "a.js", "n=1", 3e5)]


def test_numeric_looking_text_stays_text(tmp_path):
    text = HEADER + '"0","007.js","00",1,1\n"1","007.js","1.50",2,1\n"1","007.js","00",3,1\n'
    samples = read(write(tmp_path, text), base_label="0", head_label="1")
    assert as_records(samples) == [
        ("base", "007.js", "00", 1.0),
        ("head", "007.js", "1.50", 2.0),
        ("head", "007.js", "00", 3.0),
    ]


def test_several_files_concatenate_as_shards(tmp_path):
    one = write(tmp_path, HEADER + '"old","a.js","n=1",1,1\n"new","a.js","n=1",2,1\n', "one.csv")
    two = write(tmp_path, '"binary","filename","configuration","rate"\r\n"old","b.js","",3\r\n', "two.csv")
    samples = read(one, two)
    assert as_records(samples) == [
        ("base", "a.js", "n=1", 1.0),
        ("head", "a.js", "n=1", 2.0),
        ("base", "b.js", "", 3.0),
    ]
    assert samples["time"].isna().tolist() == [False, False, True]


def test_stdin_dash(monkeypatch):
    data = (FIXTURES / "quoting-crlf-bom.csv").read_bytes()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    assert as_records(results.read_samples(["-"])) == as_records(read(FIXTURES / "quoting.csv"))


def test_other_labels(tmp_path):
    path = write(tmp_path, HEADER + '"main","a.js","n=1",1,1\n"pr","a.js","n=1",2,1\n')
    assert read(path, base_label="main", head_label="pr")["side"].astype(str).tolist() == ["base", "head"]
    with pytest.raises(InputError, match="line 2: binary label 'main' is neither"):
        read(path)


# (file text, expected message after "<path>: ")
BAD_INPUTS = {
    "empty": ("", "empty file"),
    "whitespace only": ("  \r\n\n", "empty file"),
    "header only": (HEADER, "no rows after the header"),
    "header and blank lines": (HEADER + "\n\r\n\n", "no rows after the header"),
    "missing rate column": (
        '"binary","filename","configuration","time"\n"old","a.js","",1\n',
        "line 1: missing column 'rate'",
    ),
    "no header": ('"old","a.js","n=1",1,1\n', "line 1: missing column 'binary', 'filename', 'configuration', 'rate'"),
    "third label": (
        HEADER + '"old","a.js","",1,1\n"new","a.js","",1,1\n"newer","a.js","",1,1\n',
        "line 4: binary label 'newer'",
    ),
    "zero rate": (HEADER + '"old","a.js","",0,1\n', "line 2: rate '0' is not a finite positive number"),
    "negative rate": (HEADER + '"old","a.js","",-3.5,1\n', "line 2: rate '-3.5' is not a finite positive number"),
    "NaN rate": (HEADER + '"old","a.js","",1,1\n"old","a.js","",NaN,1\n', "line 3: rate 'NaN' is not a finite"),
    "Infinity rate": (HEADER + '"old","a.js","",Infinity,1\n', "line 2: rate 'Infinity' is not a finite"),
    "text rate": (HEADER + '"old","a.js","",fast,1\n', "line 2: rate 'fast' is not a finite"),
    "python-only number": (HEADER + '"old","a.js","",1_000,1\n', "line 2: rate '1_000' is not a finite"),
    "empty rate": (HEADER + '"old","a.js","",,1\n', "line 2: rate '' is not a finite"),
    "bad time": (HEADER + '"old","a.js","",1,soon\n', "line 2: time 'soon' is not a finite number"),
    "short row": (
        HEADER + '"old","a.js","",1,1\n"new","a.js","",1\n',
        "line 3: expected 5 fields as in the header, found 4",
    ),
    "long row": (HEADER + '"old","a.js","",1,1,7\n', "line 2: expected 5 fields as in the header, found 6"),
    "long row without time": ("binary,filename,configuration,rate\nold,a.js,,1,5\n", "line 2: expected 4 fields"),
    "empty filename": (HEADER + '"old","","n=1",1,1\n', "line 2: empty filename"),
    "second header": (HEADER + '"old","a.js","",1,1\n' + HEADER, "line 3: a second header line"),
    "not utf-8": (HEADER.encode() + b'"old","a\xff.js","",1,1\n', "line 2: not UTF-8 text"),
    "not utf-8 header": (b'"bin\xe9ry","filename","configuration","rate"\n', "line 1: not UTF-8 text"),
    "only a BOM": (b"\xef\xbb\xbf\r\n", "empty file"),
    "a quoted empty record": (
        HEADER + '"old","a.js","",1,1\n""\n',
        "line 3: expected 5 fields as in the header, found 1",
    ),
    "a quote open at the end": (HEADER + '"old","a.js","",1,"1\n', "malformed CSV: "),
    "the first bad line": (HEADER + '"old","a.js","",1,soon\n"old","a.js","",0,1\n', "line 2: time 'soon'"),
}


@pytest.mark.parametrize("case", BAD_INPUTS, ids=list(BAD_INPUTS))
def test_bad_input_names_file_and_line(tmp_path, case):
    text, expected = BAD_INPUTS[case]
    assert error_of(tmp_path, text).startswith(expected)


def test_line_numbers_count_quoted_newlines_and_blank_lines(tmp_path):
    text = (
        HEADER  # line 1
        + '"old","a.js","multi\nline\r\nconfig",1,1\n'  # lines 2-4
        + "\n"  # line 5
        + "   \n"  # line 6
        + '"new","a.js","multi\nline\r\nconfig",2,1\r\n'  # lines 7-9
        + "\r\n"  # line 10
        + '"new","a.js","x",-1,1\n'  # line 11
    )
    assert error_of(tmp_path, text).startswith("line 11: rate '-1'")


def test_unbalanced_quote_points_at_where_the_record_starts(tmp_path):
    text = HEADER + '"old","a.js","n=1",1,1\n"old","a.js","n=1,1,1\n"new","a.js","n=1",1,1\n'
    message = error_of(tmp_path, text)
    assert message.startswith("line 3: expected 5 fields") and "runs on to line 4: unbalanced quote?" in message


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        read(tmp_path / "nope.csv")
    with pytest.raises(InputError, match="is a directory"):
        read(tmp_path)


def test_cli_bad_input_is_one_line_exit_2_without_traceback(tmp_path, capsys):
    path = write(tmp_path, HEADER + '"old","a.js","",1,1\n\n"new","a.js","",oops,1\n')
    assert main(["analyze", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == f"benchgate: error: {path}: line 4: rate 'oops' is not a finite positive number\n"


# Generated files: every valid one reads exactly, and an error planted anywhere must be reported at the physical
# line where its record starts.
field_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",), exclude_characters="\x00"), max_size=12)
records = st.lists(
    st.tuples(
        st.sampled_from(["old", "new"]),
        st.sampled_from(["a.js", "dir/b-c.js", "x y.js", 'q"uote.js', "c,omma.js"]),
        field_text,
        st.floats(min_value=1e-9, max_value=1e15, allow_nan=False, allow_infinity=False),
    ),
    min_size=1,
    max_size=25,
)


def quote(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def render(rows, newline: str, blank_after: set[int]) -> tuple[str, list[int]]:
    """CSV text and the physical line on which each record starts."""
    lines, starts, line = [HEADER.rstrip("\n")], [], 2
    for index, (label, filename, configuration, rate) in enumerate(rows):
        starts.append(line)
        record = ",".join([quote(label), quote(filename), quote(configuration), repr(rate), "0.5"])
        lines.append(record)
        line += 1 + len(re.findall(r"\r\n|\r|\n", record))
        if index in blank_after:
            lines.append("")
            line += 1
    return newline.join(lines) + newline, starts


@settings(max_examples=60, deadline=None)
@given(rows=records, crlf=st.booleans(), blanks=st.sets(st.integers(0, 24), max_size=4), data=st.data())
def test_generated_files_parse_exactly_and_errors_name_the_right_line(tmp_path_factory, rows, crlf, blanks, data):
    directory = tmp_path_factory.mktemp("generated")
    text, starts = render(rows, "\r\n" if crlf else "\n", blanks)
    expected = [("base" if r[0] == "old" else "head", r[1], r[2], r[3]) for r in rows]
    assert as_records(read(write(directory, text))) == expected
    bad = data.draw(st.integers(0, len(rows) - 1))
    broken = list(rows)
    broken[bad] = (rows[bad][0], rows[bad][1], rows[bad][2], -1.0)
    broken_text, broken_starts = render(broken, "\r\n" if crlf else "\n", blanks)
    assert broken_starts == starts
    assert error_of(directory, broken_text) == f"line {starts[bad]}: rate '-1.0' is not a finite positive number"


# -- run.json: records written by the version before the model still read ---------------------------------

RECORDS = Path(__file__).parent / "fixtures" / "run-records"  # written by c9bc7a0 (see tests/fixtures/run-records)
KINDS = ("fixed", "adaptive", "per-file", "duet", "sharded", "build-failure")


def _run_dirs(kind: str) -> list[Path]:
    return [RECORDS / kind / "1", RECORDS / kind / "2"] if kind == "sharded" else [RECORDS / kind]


@pytest.mark.parametrize("kind", KINDS)
def test_a_record_of_each_kind_from_the_previous_version_reads(kind, tmp_path):
    for directory in _run_dirs(kind):
        text = (directory / "run.json").read_text()
        record = results.load_run_record(directory / "run.json")
        assert record.to_json() == json.loads(text)  # read and written back, field for field
        written = results.write_run_record(tmp_path / "run.json", record.to_json())
        assert json.loads((tmp_path / "run.json").read_text()) == json.loads(text) and written == record
    samples, summary, shards = results.load([str(directory) for directory in _run_dirs(kind)])
    assert summary.has_record and summary.head.sha == record.binaries.head.sha
    checks = {
        "fixed": lambda: summary.runs == 2 and summary.pairing == "sequential" and len(samples) == 8 and not shards,
        "per-file": lambda: record.jobs == "per-file" and not record.configurations and len(samples) == 8,
        "duet": lambda: summary.pairing == "duet" and len(summary.pairs[0]) == record.pairing.pairs == 4,
        "adaptive": lambda: summary.adaptive_runs == (5, 6) and len(shards) == 1 and shards[0].record.stopped,
        "sharded": lambda: (
            summary.shards == 2
            and summary.complete
            and set(samples["filename"])
            == {
                "strings/split.js",
                "json/parse.js",
            }
        ),
        "build-failure": lambda: (
            summary.build_failure.side == "head" and not summary.build_failure.infrastructure and len(samples) == 0
        ),
    }
    assert checks[kind]()


@pytest.mark.parametrize(
    ("damage", "says"),
    [
        (lambda text: text[: len(text) // 2], "not valid JSON"),  # cut short: a killed writer
        (lambda text: text.replace('"samples": 8', '"samples": "8"'), "run record field samples: must be a whole"),
        (
            lambda text: text.replace('"failures": []', '"failures": [{"filename": "a.js", "side": "evil"}]'),
            "failures[0].side: must be one of base, head, both",
        ),
        (lambda text: text.replace('"mode": "duet"', '"mode": "trio"'), "pairing.mode: must be one of"),
    ],
)
def test_a_forged_or_truncated_record_fails_in_one_line(tmp_path, capsys, damage, says):
    copy = tmp_path / "duet"
    shutil.copytree(RECORDS / "duet", copy)
    (copy / "run.json").write_text(damage((copy / "run.json").read_text()))
    status = main(["report", str(copy), "--dry-run"])
    err = capsys.readouterr().err
    assert status == 2 and says in err and str(copy / "run.json") in err and err.count("\n") == 1, err


def test_run_json_is_replaced_whole_or_not_at_all(tmp_path, monkeypatch):
    from benchgate.results import runrecord

    path = tmp_path / "run.json"
    runrecord.write_atomically(path, '{"schema": 1}\n')
    assert path.stat().st_mode & 0o777 == 0o644

    def crash(*_args):
        raise OSError("disk full")

    monkeypatch.setattr(runrecord.os, "replace", crash)
    with pytest.raises(OSError, match="disk full"):
        runrecord.write_atomically(path, '{"schema": 2}\n')
    assert path.read_text() == '{"schema": 1}\n'  # the old record, whole
    assert [item.name for item in tmp_path.iterdir()] == ["run.json"]  # no temporary file left behind

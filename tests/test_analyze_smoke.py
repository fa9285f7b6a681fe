from benchgate.cli import main


def test_example_csv_fails_gate_on_its_regressions(repo_root, capsys):
    status = main(["analyze", str(repo_root / "examples" / "compare-sample.csv"), "--gate"])
    out = capsys.readouterr().out
    assert status == 1
    assert "buffers/buffer-compare.js n=1000000 size=16" in out
    assert "gate: FAIL" in out


def test_missing_file_is_one_line_exit_2(capsys):
    status = main(["analyze", "/nonexistent/results.csv"])
    err = capsys.readouterr().err
    assert status == 2
    assert err.count("\n") == 1 and "/nonexistent/results.csv: no such file" in err

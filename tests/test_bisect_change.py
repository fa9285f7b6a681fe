"""`bisect --change ID`: change points have a stable id, and the id gives the bisection its two commits and row."""

from __future__ import annotations

import json

from test_history_cli import ROWS, _cli, _commit, _write_runs

from benchgate import cli
from benchgate.bisect.probes import Selection, change_ends
from benchgate.errors import EXIT_OK


def test_a_row_is_selected_by_its_category_file_and_configuration():
    selection = Selection(filters=("given",))
    selection.narrow_to_row("buffers/buffer-tojson.js", "len=256 n=10000")
    assert (selection.categories, selection.filters) == (("buffers",), ("given", "buffer-tojson.js"))
    assert selection.set_args == ("len=256", "n=10000")
    selection = Selection(categories=("given",))
    selection.narrow_to_row("a/b.js", "type='int' bad")
    assert (selection.categories, selection.set_args) == (("given",), ("type=int",))


def test_a_change_point_id_is_stable_and_names_the_two_runs_around_it(capsys, tmp_path):
    store = f"sqlite:///{tmp_path / 'history.db'}"
    for run in _write_runs(tmp_path / "step", 20, step_at=12, seed=4):
        assert _cli(capsys, "record", str(run), "--store", store)[0] == EXIT_OK
    listed = []
    for _ in range(2):
        status, out, err = _cli(capsys, "changes", "--store", store, "--format", "json")
        assert status == EXIT_OK, err
        listed.append(json.loads(out))
    assert listed[0] == listed[1]
    (change,) = listed[0]
    assert change["id"].startswith("cp-") and len(change["id"]) == 15
    assert (change["before_commit"], change["commit"]) == (_commit(11), _commit(12))
    selection = Selection()
    assert change_ends(change["id"], store, selection) == (_commit(11), _commit(12))
    assert (selection.categories, selection.filters, selection.set_args) == (("history",), ("sum.js",), (ROWS[0][1],))
    # An id the store does not hold is one line and exit 2, before anything is built.
    status = cli.main(
        ["bisect", "--change", "cp-000000000000", "--store", store, "--repo", str(tmp_path), "-o", str(tmp_path / "o")]
    )
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and "no such change point" in err


def test_the_history_site_links_a_change_point_to_its_bisect_report_when_one_exists(tmp_path):
    from dataclasses import replace

    from test_history_site import series, step

    from benchgate.history import site

    values = [100.0] * 6 + [80.0] * 6
    one = series("buffers/a.js", "n=1", values)
    bisected = replace(step(6, values, one), before_commit=one.points[5].commit)
    other = series("buffers/b.js", "n=1", values)
    unbisected = replace(step(6, values, other), before_commit=other.points[5].commit)
    (tmp_path / "bisect").mkdir()
    (tmp_path / "bisect" / f"{bisected.id}.md").write_text("## benchgate bisect\n")
    index = site.write_site(tmp_path, [one, other], [bisected, unbisected])[0].read_text()
    assert index.count('">bisect</a>') == 1 and f'href="bisect/{bisected.id}.md"' in index
    assert bisected.id != unbisected.id

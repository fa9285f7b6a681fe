"""Selection means what compare.js's arguments mean: categories, --filter/--exclude on file names, --set, shards."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchgate.errors import InputError
from benchgate.run import suite

BENCH = Path(__file__).parent / "fixtures" / "bench" / "benchmark"


def test_categories_are_directories_and_benchmarks_skip_dot_and_underscore_files():
    categories = suite.list_categories(BENCH)
    assert set(categories) == {"calc", "text", "fault", "net", "harness"}  # not fixtures/
    assert categories["calc"] == ["add.js", "flags.js"]  # not _helper.js, not .hidden.js


def test_select_all_and_order():
    selection = suite.select(BENCH, ["all"])
    assert selection.files[:2] == ("calc/add.js", "calc/flags.js")
    assert len(selection.files) == 8
    assert suite.select(BENCH, ["text", "calc"]).files == ("text/quote.js", "calc/add.js", "calc/flags.js")


def test_filter_matches_file_names_any_of_them_and_exclude_wins():
    assert suite.select(BENCH, ["calc"], filters=["add"]).files == ("calc/add.js",)
    # compare.js matches the file name, not the category: 'calc' selects nothing inside calc/.
    with pytest.raises(InputError, match="no benchmark file"):
        suite.select(BENCH, ["calc"], filters=["calc"])
    assert suite.select(BENCH, ["all"], filters=["add", "quote"]).files == ("calc/add.js", "text/quote.js")
    assert suite.select(BENCH, ["calc", "fault"], filters=["a"], excludes=["flag", "hang"]).files == (
        "calc/add.js",
        "fault/crash.js",
    )


def test_unknown_category_names_it_and_the_available_ones():
    with pytest.raises(InputError) as error:
        suite.select(BENCH, ["calc", "nope"])
    assert "'nope'" in error.value.one_line() and "available: calc, fault, harness, net, text" in error.value.one_line()


def test_not_a_benchmark_directory(tmp_path):
    with pytest.raises(InputError, match="no common.js"):
        suite.select(tmp_path, ["calc"])
    with pytest.raises(InputError, match="no benchmark category"):
        suite.select(BENCH, [])


@pytest.mark.parametrize("good", ["n=1", "type=a=b", "x=", "name=two words"])
def test_set_accepts_what_common_js_accepts(good):
    assert suite.parse_set([good]) == (good,)


@pytest.mark.parametrize("bad", ["n", "=1", ""])
def test_set_rejects_malformed(bad):
    with pytest.raises(InputError, match="--set"):
        suite.parse_set(["n=1", bad])


@pytest.mark.parametrize("bad", ["0/2", "3/2", "1/0", "a/b", "1-2", "2"])
def test_shard_rejects_malformed(bad):
    with pytest.raises(InputError, match="--shard"):
        suite.parse_shard(bad)


@pytest.mark.parametrize("count", range(1, 7))
def test_shards_partition_the_files(count):
    files = suite.select(BENCH, ["all"]).files
    parts = [suite.select(BENCH, ["all"], shard=(index, count)).files for index in range(1, count + 1)]
    assert sorted(name for part in parts for name in part) == sorted(files)
    assert max(map(len, parts)) - min(map(len, parts)) <= 1


def test_shard_selection_is_recorded():
    first = suite.select(BENCH, ["all"], shard=suite.parse_shard("1/2"))
    second = suite.select(BENCH, ["all"], shard=suite.parse_shard("2/2"))
    assert set(first.files) | set(second.files) == set(suite.select(BENCH, ["all"]).files)
    assert not set(first.files) & set(second.files)
    assert first.shard == "1/2"  # as run.json records it


def test_http_benchmarks_are_detected_and_need_a_load_generator():
    assert suite.is_http_benchmark(BENCH / "net" / "http-simple.js")
    assert not suite.is_http_benchmark(BENCH / "calc" / "add.js")


def _http_suite(tmp_path: Path, declaration: str, *, test_double: bool = False) -> Path:
    bench = tmp_path / "benchmark"
    (bench / "http2").mkdir(parents=True)
    (bench / "common.js").write_text("")
    if test_double:
        (bench / "_test-double-benchmarker.js").write_text("")
    (bench / "http2" / "simple.js").write_text(
        "const bench = common.createBenchmark(main, { requests: [100], " + declaration + " });\n"
        "function main(conf) { bench.http({ path: '/', requests: conf.requests }, () => {}); }\n"
    )
    return bench


@pytest.mark.parametrize(
    ("declaration", "test_double", "present", "set_args", "skipped_because"),
    [
        ("benchmarker: ['h2load']", False, set(), (), "needs h2load, which"),
        ("benchmarker: ['h2load']", False, {"h2load"}, (), None),
        ("benchmarker: ['h2load']", False, {"wrk"}, (), "needs h2load, which"),  # wrk does not help
        ('benchmarker: ["test-double-http2"]', False, {"wrk"}, (), "needs test-double-http2, which"),
        ("benchmarker: ['test-double-http2']", True, set(), (), None),  # shipped with the suite
        ("benchmarker: ['h2load']", False, {"wrk"}, ("benchmarker=wrk",), None),  # --set replaces the config
        ("clients: [1]", False, set(), (), "needs autocannon or wrk"),
        ("clients: [1]", False, {"autocannon"}, (), None),
        ("clients: [1]", False, {"wrk"}, ("benchmarker=autocannon",), "needs autocannon, which"),  # --set's must exist
        ("clients: [1]", False, set(), ("benchmarker=test-double-http",), "needs test-double-http, which"),
        ("clients: [1]", True, set(), ("benchmarker=test-double-http",), None),  # the suite ships it
    ],
)
def test_http_files_that_name_their_benchmarker_need_that_one(
    tmp_path, declaration, test_double, present, set_args, skipped_because
):
    bench = _http_suite(tmp_path, declaration, test_double=test_double)
    assert suite.declared_benchmarkers(bench / "http2" / "simple.js") == (
        [declaration.split("'")[1] if "'" in declaration else declaration.split('"')[1]]
        if "benchmarker" in declaration
        else []
    )
    selection = suite.select(bench, ["http2"], set_args=set_args)
    skips = suite.http_skips(selection, which=lambda name: f"/usr/bin/{name}" if name in present else None)
    if skipped_because is None:
        assert skips == []
    else:
        assert len(skips) == 1 and skips[0]["filename"] == "http2/simple.js"
        assert skipped_because in skips[0]["reason"]

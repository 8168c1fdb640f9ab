"""TPC-H generation: the tables and row counts, atomicity, and input errors."""

from __future__ import annotations

import os
import re
import shutil
import signal
import stat
from pathlib import Path

import duckdb
import numpy as np
import pyarrow.parquet as pq
import pytest

from ndpkit.errors import SpecError
from ndpkit.tpc import TPCH_TABLES, generate_tpcc, generate_tpch, tpcc, tpch
from ndpkit.tpc.shape import LINEITEM_ROWS_AT_SF1

# dbgen's fixed cardinalities per unit of SF (TPC-H clause 4.2.5); lineitem is random.
ROWS_PER_SF = {
    "supplier": 10_000,
    "customer": 150_000,
    "part": 200_000,
    "partsupp": 800_000,
    "orders": 1_500_000,
}


def test_all_tables_with_their_cardinalities(tpch_dir: Path) -> None:
    files = sorted(p.name for p in tpch_dir.iterdir())
    assert files == sorted(f"{t}.parquet" for t in TPCH_TABLES)  # no staging directory left
    con = duckdb.connect()
    counts = {
        t: con.sql(f"select count(*) from '{tpch_dir / t}.parquet'").fetchall()[0][0]
        for t in TPCH_TABLES
    }
    assert counts["region"] == 5 and counts["nation"] == 25
    for table, per_sf in ROWS_PER_SF.items():
        assert counts[table] == round(per_sf * 0.01), table
    # Lineitem rows ≈ 6,001,215 × SF: within 1 % at SF 0.01 (60,175 rows, +0.27 %).
    assert counts["lineitem"] == pytest.approx(LINEITEM_ROWS_AT_SF1 * 0.01, rel=0.01)
    assert counts["lineitem"] == pq.read_metadata(tpch_dir / "lineitem.parquet").num_rows


def test_summary_counts_rows_and_bytes(tmp_path: Path) -> None:
    made = generate_tpch(0.01, tmp_path, ["nation", "region"])
    assert [t.name for t in made] == ["nation", "region"]
    assert [t.rows for t in made] == [25, 5]
    assert all(t.file_bytes == t.path.stat().st_size > 0 for t in made)


def test_existing_file_needs_overwrite(tmp_path: Path) -> None:
    (tmp_path / "region.parquet").write_bytes(b"old")
    with pytest.raises(SpecError, match="already exists"):
        generate_tpch(0.01, tmp_path, ["region"])
    assert (tmp_path / "region.parquet").read_bytes() == b"old"
    generate_tpch(0.01, tmp_path, ["region"], overwrite=True)
    assert pq.read_metadata(tmp_path / "region.parquet").num_rows == 5


def _fake_tool(tmp_path: Path) -> Path:
    """A tpchgen-cli that writes one table's file halfway, then fails."""
    script = tmp_path / "fake-tpchgen"
    script.write_text(
        "#!/bin/sh\n"
        'while [ "$1" != "--output-dir" ]; do shift; done\n'
        'printf PAR1 > "$2/region.parquet"\n'
        "echo 'disk full' >&2\n"
        "exit 3\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def test_failure_leaves_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tpch, "find_tpchgen", lambda: _fake_tool(tmp_path))
    out = tmp_path / "out"
    with pytest.raises(SpecError, match="disk full") as error:
        generate_tpch(0.01, out, ["region", "nation"])
    assert not out.exists()  # no partial file, no staging directory, no empty directory
    # Named after the output it was writing (a full disk is the usual cause), then the tool.
    assert str(error.value).startswith(f"{out}: fake-tpchgen failed to generate region")


def test_interrupt_leaves_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(*args: object) -> None:
        (args[3] / "region.parquet").write_bytes(b"PAR1")  # type: ignore[operator]
        raise KeyboardInterrupt

    monkeypatch.setattr(tpch, "_run_tool", interrupted)
    with pytest.raises(KeyboardInterrupt):
        generate_tpch(0.01, tmp_path, ["region"])
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("sf", [0.0, -1.0, float("nan"), float("inf")])
def test_bad_scale_factor(tmp_path: Path, sf: float) -> None:
    with pytest.raises(SpecError, match="sf: must be a finite number > 0"):
        generate_tpch(sf, tmp_path)


def test_unknown_table_lists_the_known(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="unknown TPC-H table 'items'; known: region, nation"):
        generate_tpch(0.01, tmp_path, ["lineitem", "items"])
    assert not any(tmp_path.iterdir())


def test_a_numpy_scale_factor_is_taken_as_a_number(tmp_path: Path) -> None:
    """tpchgen-cli was given the SF's repr, "--scale-factor np.float64(0.0012345678)", and
    the generation failed ("For more information, try '--help'")."""
    lines: list[str] = []
    made = generate_tpch(np.float64(0.0012345678), tmp_path, ["nation"], progress=lines.append)
    assert [t.rows for t in made] == [25]
    assert "generating TPC-H nation at SF 0.0012345678 with" in lines[0]
    assert tpch.sf_text(np.float64(0.0012345678)) == "0.0012345678"


@pytest.mark.parametrize("sf", ["0.01", True, pytest.param(10**400, id="int-past-float")])
def test_a_scale_factor_that_is_no_finite_number_is_refused(tmp_path: Path, sf: object) -> None:
    """A string was a TypeError from math.isfinite, an int past float's range an
    OverflowError, and True generated tables at SF 1."""
    with pytest.raises(SpecError, match="sf: must be a finite number > 0"):
        generate_tpch(sf, tmp_path)  # type: ignore[arg-type]


def test_one_table_given_as_a_string_is_refused_as_such(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match=r"tables: must be a list of table names.*\['lineitem'\]"):
        generate_tpch(0.01, tmp_path, "lineitem")
    assert not any(tmp_path.iterdir())


def test_a_table_named_twice_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="names region more than once; give each table once"):
        generate_tpch(0.01, tmp_path, ["region", "nation", "region"])
    assert not any(tmp_path.iterdir())


def test_a_directory_in_a_tables_place_is_refused_before_any_table_moves(tmp_path: Path) -> None:
    """It was found at the rename, after region.parquet had already replaced the old one."""
    (tmp_path / "region.parquet").write_bytes(b"old")
    (tmp_path / "nation.parquet").mkdir()
    with pytest.raises(SpecError, match="exists and is not a file; --overwrite replaces table"):
        generate_tpch(0.01, tmp_path, ["region", "nation"], overwrite=True)
    assert (tmp_path / "region.parquet").read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["nation.parquet", "region.parquet"]


def test_missing_tool_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(tpch.sys, "executable", str(tmp_path / "python"))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SpecError, match=r"tpchgen-cli: not found .* `pip install tpchgen-cli`"):
        tpch.find_tpchgen()


def test_a_failed_generation_leaves_no_output_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def failing(*args: object) -> None:
        raise SpecError("tpchgen-cli failed")

    monkeypatch.setattr(tpch, "_run_tool", failing)
    with pytest.raises(SpecError, match="tpchgen-cli failed"):
        generate_tpch(0.01, tmp_path / "new" / "a" / "b", ["region"])
    assert list(tmp_path.iterdir()) == []  # nor the parents made for it


def test_a_generator_killed_by_a_signal_is_said_in_words() -> None:
    assert tpch._how_it_ended(3) == "exit status 3"
    assert tpch._how_it_ended(-signal.SIGXFSZ).startswith("killed by SIGXFSZ: a file grew past")
    assert tpch._how_it_ended(-signal.SIGKILL) == "killed by SIGKILL"


@pytest.mark.parametrize(("overwrite", "call"), [(True, "replace"), (False, "link")])
def test_a_ctrl_c_between_the_renames_waits_for_them(
    tmp_path: Path, overwrite: bool, call: str
) -> None:
    """The tables were renamed into place one by one with signals live: a Ctrl-C after the
    first left `nation.parquet` without `region.parquet` (and, with --overwrite, old tables
    beside new ones). Run in a child, whose Ctrl-C is Python's default KeyboardInterrupt.
    Without overwrite the tables are put in place by hard links (`files.put_new`)."""
    out = tmp_path / "out"
    script = f"""
import os, signal, sys
from pathlib import Path
from ndpkit.tpc import generate_tpch
real, renamed = os.{call}, []
def put(src, dst):
    real(src, dst)
    renamed.append(dst)
    if len(renamed) == 1:
        os.kill(os.getpid(), signal.SIGINT)
os.{call} = put
try:
    generate_tpch(0.01, Path({str(out)!r}), ["nation", "region"], overwrite={overwrite})
except KeyboardInterrupt:
    print("stopped after", len(renamed))
"""
    import subprocess  # noqa: PLC0415
    import sys  # noqa: PLC0415

    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.stdout.split() == ["stopped", "after", "2"], done.stderr
    assert sorted(p.name for p in out.iterdir()) == ["nation.parquet", "region.parquet"]


def test_a_table_that_is_a_symbolic_link_is_written_through_and_stays_a_link(
    tmp_path: Path,
) -> None:
    """--overwrite renamed the new table onto the link, which became a plain file and left
    the file it named old; `data tpcc` and every other output write through a link."""
    out, real = tmp_path / "out", tmp_path / "real"
    out.mkdir()
    real.mkdir()
    (real / "r.parquet").write_bytes(b"old")
    (out / "region.parquet").symlink_to("../real/r.parquet")
    (out / "nation.parquet").symlink_to(real / "n.parquet")  # dangling until written
    made = generate_tpch(0.01, out, ["region", "nation"], overwrite=True)
    assert [t.rows for t in made] == [5, 25]
    assert (out / "region.parquet").is_symlink() and (out / "nation.parquet").is_symlink()
    assert pq.read_metadata(real / "r.parquet").num_rows == 5
    assert pq.read_metadata(real / "n.parquet").num_rows == 25
    assert sorted(p.name for p in real.iterdir()) == ["n.parquet", "r.parquet"]  # no temporary
    assert sorted(p.name for p in out.iterdir()) == ["nation.parquet", "region.parquet"]


def test_a_dangling_link_is_written_through_without_overwrite(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "region.parquet").symlink_to(tmp_path / "real" / "r.parquet")
    generate_tpch(0.01, tmp_path / "out", ["region"])
    assert (tmp_path / "out" / "region.parquet").is_symlink()
    assert pq.read_metadata(tmp_path / "real" / "r.parquet").num_rows == 5


def test_a_link_into_a_missing_directory_is_refused_before_generating(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def not_run(*args: object) -> None:
        pytest.fail("generated")

    monkeypatch.setattr(tpch, "_run_tool", not_run)
    (tmp_path / "region.parquet").symlink_to(tmp_path / "gone" / "r.parquet")
    with pytest.raises(SpecError, match=r"cannot write: no directory .*gone"):
        generate_tpch(0.01, tmp_path, ["region"])


@pytest.mark.parametrize("links", ["one to the other", "both to one file"])
def test_two_tables_that_are_one_file_are_refused_before_generating(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, links: str
) -> None:
    """region.parquet and a nation.parquet linking to it: --overwrite wrote the nation table
    into region.parquet (25 rows under region's name), exit 0."""

    def not_run(*args: object) -> None:
        pytest.fail("generated")

    monkeypatch.setattr(tpch, "_run_tool", not_run)
    (tmp_path / "real.parquet").write_bytes(b"old")
    if links == "one to the other":
        (tmp_path / "region.parquet").write_bytes(b"old")
        (tmp_path / "nation.parquet").symlink_to("region.parquet")
    else:
        (tmp_path / "region.parquet").symlink_to("real.parquet")
        (tmp_path / "nation.parquet").symlink_to("real.parquet")
    with pytest.raises(SpecError, match="two tables cannot be written to one file"):
        generate_tpch(0.01, tmp_path, ["region", "nation"], overwrite=True)
    assert (tmp_path / "real.parquet").read_bytes() == b"old"


def test_an_overwrite_that_cannot_replace_a_table_replaces_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--overwrite renamed the tables one by one: one that could not be replaced (an
    immutable file, say) left the tables before it at the new SF and the rest at the old,
    after an OSError naming the removed staging directory."""
    generate_tpch(0.01, tmp_path, ["supplier", "customer"])
    real = os.replace

    def replace(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        if Path(dst).name == "customer.parquet" and ".tpch-" in str(src):
            raise PermissionError(1, "Operation not permitted", str(src))
        real(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(
        SpecError, match=r"customer\.parquet: cannot replace it \(Operation not permitted\); no"
    ):
        generate_tpch(0.02, tmp_path, ["supplier", "customer"], overwrite=True)
    rows = {p.name: pq.read_metadata(p).num_rows for p in tmp_path.iterdir()}
    assert rows == {"supplier.parquet": 100, "customer.parquet": 1500}  # both still SF 0.01
    monkeypatch.setattr(os, "replace", real)
    made = generate_tpch(0.02, tmp_path, ["supplier", "customer"], overwrite=True)
    assert [t.rows for t in made] == [200, 3000]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["customer.parquet", "supplier.parquet"]


def test_out_may_be_a_str(tmp_path: Path) -> None:
    """`generate_tpch(0.01, "dir")` failed: 'str' object has no attribute 'exists'."""
    (made,) = generate_tpch(0.01, str(tmp_path / "out"), ["nation"])
    assert made.path == tmp_path / "out" / "nation.parquet" and made.rows == 25


@pytest.mark.parametrize(
    ("sf", "said"),
    [(1000.0000001, "got 1000.0000001"), (0.00099999, "got 0.00099999"), (1e9, "got 1e+09")],
)
def test_an_out_of_range_sf_is_said_as_given(sf: float, said: str) -> None:
    """`:g` rounded 1000.0000001 to "got 1000", a value the range holds."""
    with pytest.raises(SpecError, match=rf"sf: must be from 0\.001 to 1000, {re.escape(said)}$"):
        tpch.check_scale_factor(sf, bounds=tpch.SF_RANGE)


def test_an_overwrite_that_cannot_put_a_table_back_does_not_say_none_was_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failure while putting back was passed over: the error still said "no table was
    replaced" while supplier.parquet held the new SF and its old table a hidden name."""
    generate_tpch(0.01, tmp_path, ["supplier", "customer"])
    real = os.replace

    def replace(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        if Path(dst).name == "customer.parquet" and ".tpch-" in str(src):
            raise PermissionError(1, "Operation not permitted", str(src))
        if Path(src).name.startswith(".supplier.parquet.old-"):
            raise OSError(5, "Input/output error", str(src))
        real(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(SpecError) as error:
        generate_tpch(0.02, tmp_path, ["supplier", "customer"], overwrite=True)
    message = str(error.value)
    assert "no table was replaced" not in message
    (old,) = tmp_path.glob(".supplier.parquet.old-*")
    assert (
        f"could not put back: {tmp_path / 'supplier.parquet'}, whose old table is kept "
        f"as {old} (Input/output error)" in message
    )
    assert pq.read_metadata(old).num_rows == 100


@pytest.mark.parametrize(("given", "meant"), [("LINEITEM", "lineitem"), ("lineitems", "lineitem")])
def test_an_unknown_table_is_answered_with_the_table_meant(given: str, meant: str) -> None:
    with pytest.raises(SpecError, match=f"unknown TPC-H table '{given}'") as caught:
        tpch.tpch_tables([given])
    assert str(caught.value).endswith(f"; did you mean '{meant}'?")


def _small_disk(monkeypatch: pytest.MonkeyPatch, free_bytes: int) -> None:
    """The file system under every path has `free_bytes` free; generating anything fails."""
    usage = shutil.disk_usage("/")
    monkeypatch.setattr(
        tpch.shutil, "disk_usage", lambda path: type(usage)(usage.total, 0, free_bytes)
    )

    def generated(*args: object) -> None:
        raise AssertionError("generated although the tables cannot fit")

    monkeypatch.setattr(tpch, "_run_tool", generated)
    monkeypatch.setattr(tpcc, "order_line_batches", generated)


@pytest.mark.parametrize("table", ["tpch", "tpcc"])
def test_tables_that_cannot_fit_on_the_disk_are_refused_before_generating(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, table: str
) -> None:
    """SF 500 started tpchgen-cli on a disk with a quarter of the space it needed."""
    sf = 100.0
    need = tpch.tpch_bytes(sf, tpch.TPCH_TABLES) if table == "tpch" else sf * 9_000_000
    _small_disk(monkeypatch, int(need) // 2)
    out = tmp_path / "new" / "out"
    with pytest.raises(SpecError, match=r"SF 100 needs at least .* but .* free") as caught:
        if table == "tpch":
            generate_tpch(sf, out)
        else:
            generate_tpcc(sf, out)
    assert caught.value.field == "sf"
    assert str(tmp_path) in str(caught.value)  # the existing directory the space is on
    assert list(tmp_path.iterdir()) == []


def test_tables_that_fit_are_generated_on_a_small_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bound is what this run needs, not a fixed amount: SF 0.01's lineitem (~2 MB)
    fits in 4 MB (a bound of 1.9 MB)."""
    usage = shutil.disk_usage("/")
    monkeypatch.setattr(tpch.shutil, "disk_usage", lambda path: type(usage)(usage.total, 0, 4e6))
    (made,) = generate_tpch(0.01, tmp_path, ["lineitem"])
    assert made.rows > 0
    assert tpch.tpch_bytes(0.01, ["lineitem"]) <= made.file_bytes


def test_the_space_bound_is_below_what_is_written(tpch_dir: Path, tmp_path: Path) -> None:
    """`check_room` refuses only runs that cannot fit: its per-SF bytes are no more than
    the files generated."""
    for name in TPCH_TABLES:
        written = (tpch_dir / f"{name}.parquet").stat().st_size
        assert tpch.tpch_bytes(0.01, [name]) <= written, name
    made = generate_tpcc(0.1, tmp_path)
    assert made.file_bytes >= 0.1 * tpcc.PARQUET_BYTES_PER_SF

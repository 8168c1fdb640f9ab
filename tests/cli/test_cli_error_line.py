"""An input error is one line on stderr, whatever the library that raised it wrote."""

from __future__ import annotations

import pytest
import typer

from ndpkit.cli.common import user_errors
from ndpkit.runtime import ShardError


def test_a_message_of_several_lines_is_printed_as_one(capsys: pytest.CaptureFixture[str]) -> None:
    thrift = (
        "Couldn't deserialize thrift: TProtocolException: Invalid data\n"
        "Deserializing page header failed.\n"
    )
    with pytest.raises(typer.Exit) as info, user_errors():
        raise ShardError("device-00/shard-0000.parquet", f"not a readable Parquet shard ({thrift})")
    assert info.value.exit_code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1
    assert "Invalid data Deserializing page header failed." in lines[0]

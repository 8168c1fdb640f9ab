"""Examples in README.md and docs/*.md print what the docs quote, read from the doc files
(not copies here), where the quoted output has drifted from the code before."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from cli_errors import one_error_line

ROOT = Path(__file__).resolve().parents[2]


def quoted(doc: str, command: str) -> list[str]:
    """The lines a doc's code blocks show under `$ COMMAND` (an annotation after the command,
    `# …` or `(trimmed)`, aside), up to the block's next command or its end; every place the
    doc runs it."""
    lines = (ROOT / doc).read_text(encoding="utf-8").splitlines()
    starts = [
        i
        for i, line in enumerate(lines)
        if re.sub(r"\s+(#.*|\(.*\))$", "", line.removeprefix("$ ").strip()) == command
        and line.startswith("$ ")
    ]
    assert starts, (doc, command)
    said = []
    for start in starts:
        for line in lines[start + 1 :]:
            if line.startswith(("$ ", "```")):
                break
            said.append(line)
    assert said, (doc, command)
    return said


def rows(table: str) -> list[list[str]]:
    """A table's rows as their cells' text."""
    return [
        [cell.strip() for cell in line.strip("│").split("│")]
        for line in table.splitlines()
        if line.startswith("│")
    ]


@pytest.mark.parametrize(
    "command",
    [
        "ndpkit plan --platform rfns --app he",
        "ndpkit plan -p risp-64ch -a sobel -o ru_time=configured --time-model channels_off",
    ],
)
def test_the_readme_s_plan_excerpts_are_rows_of_the_plan(ndpkit, command: str) -> None:
    """README.md's worked examples quote rows of `ndpkit plan`'s table without its borders:
    each is a row the command prints (a value cut short with `…` begins that row's)."""
    result = ndpkit(*command.split()[1:])
    assert result.returncode == 0, result.stderr
    printed = {row[0]: row[1] for row in rows(result.stdout) if len(row) == 2}
    said = quoted("README.md", command)
    for line in said:
        name, value = re.split(r"\s{2,}", line.strip(), maxsplit=1)
        if value.endswith(" …"):
            assert printed[name].startswith(value.removesuffix(" …")), (name, printed[name])
        else:
            assert printed[name] == value, (name, printed[name])


def test_the_readme_s_python_example_prints_what_its_comment_says() -> None:
    """The README's Python example ends in a print whose output its comment gives."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```python\n(.*?)^```", readme, flags=re.MULTILINE | re.DOTALL)
    assert len(blocks) == 1
    said = re.search(r"^print\(.*\)\s+# (.+)$", blocks[0], flags=re.MULTILINE)
    assert said is not None
    result = subprocess.run(
        [sys.executable, "-c", blocks[0]], capture_output=True, text=True, timeout=120, check=True
    )
    assert result.stdout.strip() == said.group(1).strip()


def test_the_reproduce_json_excerpt_is_where_its_head_cuts_the_document(ndpkit) -> None:
    """docs/reproducing-rans-rfns.md quotes `reproduce rans-rfns --format json | head -N` down
    to the first row of "tables": those are the last lines `head -N` gives (the document grew
    twice past the N the doc gave, which then showed none of them)."""
    doc = "docs/reproducing-rans-rfns.md"
    text = (ROOT / doc).read_text(encoding="utf-8")
    pattern = r"^\$ (ndpkit reproduce rans-rfns --format json \| head -(\d+))"
    command = re.search(pattern, text, flags=re.MULTILINE)
    assert command is not None
    said = quoted(doc, command.group(1))
    tail = said[len(said) - said[::-1].index("    ...") :]
    assert tail[0].strip() == '"tables": {'
    result = ndpkit("reproduce", "rans-rfns", "--format", "json")
    assert result.returncode == 0, result.stderr
    json.loads(result.stdout)
    head = result.stdout.splitlines()[: int(command.group(2))]
    assert head[-len(tail) :] == tail


def test_the_profile_errors_in_docs_platforms_md_print_what_it_says(ndpkit, tmp_path) -> None:
    """docs/platforms.md's `--profiles` errors, on its `my-profiles.toml` without its engine
    rate and host-only rate, and with `alpha = 0` (the doc gave the CNS error without its
    last words)."""
    doc = "docs/platforms.md"
    text = (ROOT / doc).read_text(encoding="utf-8")
    profiles = re.search(r"^```toml\n# my-profiles.toml\n(.*?)^```", text, re.M | re.S)
    assert profiles is not None
    lines = profiles.group(1).splitlines()
    kept = [line for line in lines if not line.startswith(("engine =", "host_only ="))]
    assert len(kept) == len(lines) - 2
    (tmp_path / "noengine-profiles.toml").write_text("\n".join(kept) + "\n", encoding="utf-8")
    bad = [re.sub(r"^alpha = \d+", "alpha = 0", line) for line in lines]
    (tmp_path / "bad-profiles.toml").write_text("\n".join(bad) + "\n", encoding="utf-8")
    for command in (
        "ndpkit estimate -p rans -a scan --profiles noengine-profiles.toml",
        "ndpkit estimate -p cns -a scan --profiles noengine-profiles.toml",
        "ndpkit estimate -p rans -a scan --profiles bad-profiles.toml",
    ):
        said = " ".join(quoted(doc, command))  # a long line is wrapped in the doc
        args = [str(tmp_path / a) if a.endswith(".toml") else a for a in command.split()[1:]]
        got = one_error_line(ndpkit(*args)).replace(f"{tmp_path}/", "")
        assert got == said, command


def toml_block(doc: str, name: str) -> str:
    """The TOML block of `doc` that begins `# NAME`."""
    text = (ROOT / doc).read_text(encoding="utf-8")
    block = re.search(rf"^```toml\n(# {re.escape(name)}\n.*?)^```", text, re.M | re.S)
    assert block is not None, (doc, name)
    return block.group(1)


EDGE16_COMMANDS = list(
    dict.fromkeys(
        (doc, line.removeprefix("$ ").split("  ")[0].strip())
        for doc in ("docs/platforms.md", "docs/planning.md")
        for line in (ROOT / doc).read_text(encoding="utf-8").splitlines()
        if line.startswith("$ ndpkit ") and "edge16.toml" in line
    )
)


@pytest.mark.parametrize(("doc", "command"), EDGE16_COMMANDS)
def test_the_edge16_examples_print_what_the_docs_quote(
    ndpkit, tmp_path: Path, doc: str, command: str
) -> None:
    """platforms.md's worked platform (`edge16.toml`) and profile set (`my-profiles.toml`),
    as the docs give them, through every command platforms.md and planning.md show on them:
    each row quoted is a row printed, and each other line quoted is a line printed."""
    for name in ("edge16.toml", "my-profiles.toml"):
        (tmp_path / name).write_text(toml_block("docs/platforms.md", name), encoding="utf-8")
    args = [str(tmp_path / a) if a.endswith(".toml") else a for a in command.split()[1:]]
    result = ndpkit(*args)
    assert result.returncode == 0, result.stderr
    printed = result.stdout.replace(f"{tmp_path}/", "").splitlines()
    printed += result.stderr.replace(f"{tmp_path}/", "").splitlines()
    table_rows = rows("\n".join(printed))
    said = quoted(doc, command)
    for line in said:
        if line.startswith("│"):
            assert rows(line)[0] in table_rows, line
        elif not line.startswith(("┏", "┃", "┡", "└")):
            assert line in printed, line
    assert len(EDGE16_COMMANDS) == 9  # the docs' commands were all found


RANS_RFNS_DOC = "docs/reproducing-rans-rfns.md"
REPRODUCE_COMMANDS = list(
    dict.fromkeys(
        re.sub(r"\s+(#.*|\(.*\))$", "", line.removeprefix("$ ").strip())
        for line in (ROOT / RANS_RFNS_DOC).read_text(encoding="utf-8").splitlines()
        if line.startswith("$ ndpkit reproduce rans-rfns") and "|" not in line
    )
)


@pytest.mark.parametrize("command", REPRODUCE_COMMANDS)
def test_the_rans_rfns_doc_quotes_what_reproduce_prints(ndpkit, command: str) -> None:
    """docs/reproducing-rans-rfns.md quotes `ndpkit reproduce rans-rfns` tables (trimmed),
    errors and footnotes; only its JSON excerpt was checked, and its tables' cells are the
    ones a reader compares with the paper. Each row quoted (header or body) is a row printed,
    and each other line quoted is a line printed, at the fixture's 200 columns, where Table
    11's engine lists go to footnotes as the doc shows them."""
    result = ndpkit(*command.split()[1:])
    printed = result.stdout.splitlines() + result.stderr.splitlines()
    table_rows = rows("\n".join(line.replace("┃", "│") for line in printed))
    said = quoted(RANS_RFNS_DOC, command)
    assert said
    for line in said:
        if line.startswith(("│", "┃")):
            assert rows(line.replace("┃", "│"))[0] in table_rows, line
        elif line.strip() and not line.startswith(("┏", "┡", "└")):
            assert line in printed, line
    assert result.returncode == (2 if any(s.startswith("error:") for s in said) else 0)
    assert len(REPRODUCE_COMMANDS) == 11  # the doc's commands were all found


RISP_DOC = "docs/reproducing-risp.md"
RISP_COMMANDS = list(
    dict.fromkeys(
        re.sub(r"\s+(#.*|\(.*\)?)$", "", line.removeprefix("$ ").strip())
        for line in (ROOT / RISP_DOC).read_text(encoding="utf-8").splitlines()
        if line.startswith("$ ndpkit reproduce risp") and "--format json" not in line
    )
)


@pytest.mark.parametrize("command", RISP_COMMANDS)
def test_the_risp_doc_quotes_what_reproduce_prints(ndpkit, command: str) -> None:
    """docs/reproducing-risp.md quotes `ndpkit reproduce risp` rows (trimmed), notes and
    errors, and nothing checked them (the rans-rfns doc's are checked above). Each row
    quoted is a row printed, and each other line quoted is printed (a long note wraps at
    the fixture's 200 columns, so it is looked for in the lines joined)."""
    result = ndpkit(*command.split()[1:])
    printed = result.stdout.splitlines() + result.stderr.splitlines()
    table_rows = rows("\n".join(printed))
    text = " ".join(line.strip() for line in printed if not line.startswith("│"))
    said = quoted(RISP_DOC, command)
    for line in said:
        if line.startswith("│"):
            assert rows(line)[0] in table_rows, line
        elif line.strip() and not line.startswith(("┏", "┃", "┡", "└")):
            assert line.strip() in text, line
    assert result.returncode == (2 if any(s.startswith("error:") for s in said) else 0)
    assert len(RISP_COMMANDS) == 10  # the doc's commands were all found


def test_the_risp_doc_s_default_run_excerpts_are_printed(ndpkit) -> None:
    """The block of excerpts "from the default run" in docs/reproducing-risp.md: each whole
    row is a row `ndpkit reproduce risp` prints, and each note quoted after "note:" a note it
    prints (rows trimmed with `...` are skipped)."""
    text = (ROOT / RISP_DOC).read_text(encoding="utf-8")
    block = re.search(r"Excerpts from the default run.*?\n```\n(.*?)^```", text, re.M | re.S)
    assert block is not None
    result = ndpkit("reproduce", "risp")
    assert result.returncode == 0, result.stderr
    printed = result.stdout.splitlines()
    table_rows = rows(result.stdout)
    notes = " ".join(line.strip() for line in printed if not line.startswith("│"))
    lines = block.group(1).splitlines()
    checked = 0
    for before, line in zip(["", *lines], lines, strict=False):
        if line.startswith("│") and "..." not in line:
            assert rows(line)[0] in table_rows, line
            checked += 1
        elif before.endswith("note:"):
            assert line.strip() in notes, line
            checked += 1
    assert checked >= 7  # Table I and E4 rows, E2 and E3 notes

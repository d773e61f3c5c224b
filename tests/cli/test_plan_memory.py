"""``python -m chipsim plan-memory``: spreadsheet CSVs, one-line errors, the search's limit."""

from __future__ import annotations

import random
import subprocess
import sys
import time

import pytest

from chipsim.cli import main
from chipsim.errors import SerializationError
from chipsim.passes.memory import read_records_csv
from chipsim.passes.memory.csv_io import decode_csv_bytes

CSV = "id,lower,upper,size\na,0,2,100\nb,1,3,64\nc,2,4,100\n"


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "chipsim", "plan-memory", *args], capture_output=True, text=True
    )


@pytest.mark.parametrize(
    "data",
    [
        b"\xef\xbb\xbfid,lower,upper,size\r\na,0,2,100\r\nb,1,3,64\r\nc,2,4,100\r\n",  # Excel
        b"ID;Lower;Upper;Size\na;0;2;100\nb;1;3;64\nc;2;4;100\n",  # a ';' locale
        b"  id , lower , upper , size , note\n a , 0 , 2 , 100 , x\n\nb,1,3,64,\nc,2,4,100,y\n",
        b"size\tupper\tlower\tid\r100\t2\t0\ta\r64\t3\t1\tb\r100\t4\t2\tc\r",  # tabs, old Mac
        "id,lower,upper,size\na,0,2,100\nb,1,3,64\nc,2,4,100\n".encode("utf-16"),
    ],
    ids=["bom-crlf", "semicolon", "spaces-extra-column", "tabs-cr", "utf16"],
)
def test_spreadsheet_files_read_the_same(data):
    recs = read_records_csv(decode_csv_bytes(data, "x.csv"), "x.csv")
    assert recs == read_records_csv(CSV)


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("", "the file is empty"),
        ("id,lower,size\na,0,1\n", "line 1: missing column\\(s\\) upper"),
        ("\n\nid,lower,upper,size\na,0,1\n", "line 4: expected 4 fields .*got 3"),
        ("id,lower,upper,size\na,0,1,1.5\n", "line 2: size of 'a' must be a whole number \\(bytes"),
        ('id,lower,upper,size\na,0,1,"1,048,576"\n', "without thousands separators"),
        ("id;lower;upper;size\na;0;2;10\n ;1;2;10\n", "line 3: the id is empty"),
        ("id,lower,upper,size\r\na,0,1,5\r\na,1,2,5\r\n", "line 3: duplicate id 'a' .*line 2"),
        ("id,lower,upper,size\na,3,3,5\n", "line 2: .*half-open \\[lower, upper\\)"),
        ("id,lower,upper,size\na,-1,3,5\n", "line 2: .*first step must be >= 0"),
    ],
)
def test_errors_name_the_line(text, match):
    with pytest.raises(SerializationError, match=match):
        read_records_csv(text, "in.csv")


def test_bytes_that_are_not_utf8_name_their_line():
    with pytest.raises(SerializationError, match="line 3: byte 0xe9 is not UTF-8 .*CSV UTF-8"):
        decode_csv_bytes(b"id,lower,upper,size\na,0,1,5\ncaf\xe9,1,2,5\n", "x.csv")


def test_offsets_printed_without_output(tmp_path, capsys):
    src = tmp_path / "in.csv"
    src.write_text("id,lower,upper,size\nonly,0,2,100\n")
    assert main(["plan-memory", str(src)]) == 0
    out = capsys.readouterr().out
    assert "(1 buffer, alignment 64 B)" in out  # singular
    table = out.split("\n\n", 1)[1].splitlines()
    assert table[0].split() == ["id", "size", "first", "last", "offset"]
    assert table[1].split() == ["only", "100", "0", "2", "0"]
    assert "-o OUT.csv" in table[-1]


def test_output_file_and_stdout(tmp_path, capsys):
    src, dst = tmp_path / "in.csv", tmp_path / "plan.csv"
    src.write_text(CSV)
    assert main(["plan-memory", str(src), "-o", str(dst)]) == 0
    assert "(3 buffers" in capsys.readouterr().out
    assert dst.read_text().splitlines() == [
        "id,lower,upper,size,offset", "a,0,2,100,0", "b,1,3,64,128", "c,2,4,100,0"
    ]  # fmt: skip
    assert main(["plan-memory", str(src), "-o", "-"]) == 0
    both = capsys.readouterr()
    assert both.out == dst.read_text()  # stdout: the CSV alone, for a pipe
    assert "arena:       192 B" in both.err


def test_unwritable_output_is_one_line(tmp_path):
    src = tmp_path / "in.csv"
    src.write_text(CSV)
    for target in (tmp_path, tmp_path / "no" / "such" / "dir.csv"):
        done = cli(str(src), "-o", str(target))
        assert done.returncode == 2 and done.stdout == ""
        assert done.stderr.startswith(f"error: cannot write the plan to {target}: ")
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (["--strategy", "best"], "unknown memory planner 'best'"),
        (["--time-limit", "2"], "--time-limit and --seed apply to --strategy search only"),
        (["--strategy", "search", "--time-limit", "0"], "--time-limit must be a positive"),
        (["--alignment", "0"], "alignment must be a positive int"),
    ],
)
def test_bad_options_are_one_line(tmp_path, capsys, args, match):
    src = tmp_path / "in.csv"
    src.write_text(CSV)
    assert main(["plan-memory", str(src), *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1
    assert match in err


def test_help_states_the_interval_convention():
    done = cli("--help")
    assert done.returncode == 0
    text = " ".join(done.stdout.split())
    assert "half-open [lower, upper)" in text and "--time-limit SECONDS" in text
    assert "-o -" in text


def test_search_returns_within_its_limit_on_1000_buffers(tmp_path):
    rng = random.Random(12)
    lines = ["id,lower,upper,size"]
    for k in range(1000):
        lower = rng.randrange(10**9)
        lines.append(f"buf{k},{lower},{lower + rng.randrange(1, 10**8)},{rng.randint(1, 1 << 22)}")
    src = tmp_path / "big.csv"
    src.write_text("\n".join(lines) + "\n")
    start = time.perf_counter()
    done = cli(str(src), "--strategy", "search", "--time-limit", "1", "-o", str(tmp_path / "p.csv"))
    elapsed = time.perf_counter() - start
    assert done.returncode == 0, done.stderr
    assert "(1000 buffers" in done.stdout and "search:" in done.stdout
    # 1 s of search, plus Python's start-up and chipsim's import on a shared, busy machine.
    assert elapsed < 1 + 5

"""A streamed CSV row with another number of fields than the header is refused naming its line.

pyarrow's reader reads megabytes ahead, so the refusal said "after row 0"
whatever the row; the line is now found by splitting the text again.
"""

from __future__ import annotations

import pytest

import bayesrule as br

pytest.importorskip("pyarrow")


@pytest.mark.parametrize(("bad", "fields"), [("1,2", 2), ("1,2,3,x,9", 5)], ids=["short", "long"])
@pytest.mark.parametrize("at", [5, 3001])
def test_a_ragged_row_is_refused_naming_its_line(tmp_path, bad, fields, at):
    lines = ["a,b,c,label"] + [f"{i},{i * 2},{i % 7},{'x' if i % 2 else 'y'}" for i in range(5000)]
    lines[at] = bad
    path = tmp_path / "ragged.csv"
    path.write_text("\n".join(lines) + "\n")
    model = br.GaussianNB()
    with pytest.raises(ValueError) as info:
        br.fit_stream(model, path, target="label", block_rows=500, progress=False)
    msg = str(info.value)
    assert "ragged.csv" in msg and f"line {at + 1} has {fields} fields" in msg
    assert "the header has 4" in msg and "after row" not in msg
    assert not hasattr(model, "classes_")

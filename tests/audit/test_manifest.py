"""The audit manifest: canonical JSON, content hash, input hashes, exclusive and atomic writes."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rankcut.audit.manifest import (
    MANIFEST_FILE,
    SCHEMA,
    SCHEMA_VERSION,
    canonical_json,
    check_inputs,
    content_hash,
    describe_file,
    load_manifest,
    sha256_file,
    write_json_atomic,
    write_manifest,
)


def _content(tmp_path: Path, **extra: object) -> dict[str, object]:
    run = tmp_path / "run.txt"
    if not run.exists():
        run.write_text("q1 Q0 d1 1 2.0 t\n")
    return {"schema": SCHEMA, "schema_version": SCHEMA_VERSION, "design": "excluded", "delta": 0.05,
            "inputs": {"run": describe_file(run, "--run", tmp_path)}, **extra}


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: st.lists(children, max_size=3)
    | st.dictionaries(st.text(max_size=5), children, max_size=3),
    max_leaves=10,
)


@given(st.dictionaries(st.text(max_size=6), json_values, max_size=5))
def test_content_hash_ignores_key_order_and_the_id(d: dict[str, object]) -> None:
    reordered = dict(reversed(list(d.items())))
    assert content_hash(d) == content_hash(reordered)
    assert content_hash({**d, "audit_id": "anything"}) == content_hash(d)
    assert json.loads(canonical_json(d)) == d


def test_content_hash_changes_with_any_value() -> None:
    base = {"delta": 0.05, "seed": 11, "nested": {"a": [1, 2]}}
    assert content_hash(base) != content_hash({**base, "delta": 0.051})
    assert content_hash(base) != content_hash({**base, "nested": {"a": [2, 1]}})


def test_canonical_json_refuses_nan() -> None:
    with pytest.raises(ValueError, match="plain JSON"):
        canonical_json({"delta": float("nan")})


def test_write_and_load_round_trip(tmp_path: Path) -> None:
    m = write_manifest(tmp_path, _content(tmp_path, seed=11))
    again = load_manifest(tmp_path)
    assert again.audit_id == m.audit_id == content_hash(dict(m.content))
    assert again["seed"] == 11 and again.get("missing") is None
    on_disk = json.loads((tmp_path / MANIFEST_FILE).read_text())
    assert on_disk["audit_id"] == m.audit_id
    check_inputs(again)


def test_write_refuses_nan_with_its_key(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"manifest\.pools\.p0 is nan"):
        write_manifest(tmp_path, _content(tmp_path, pools={"p0": float("nan")}))
    assert not (tmp_path / MANIFEST_FILE).exists()


def test_refreeze_into_the_same_folder_is_refused(tmp_path: Path) -> None:
    first = write_manifest(tmp_path, _content(tmp_path, seed=1))
    with pytest.raises(FileExistsError, match="already holds a frozen audit"):
        write_manifest(tmp_path, _content(tmp_path, seed=2))
    assert load_manifest(tmp_path).audit_id == first.audit_id
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temp files left


def test_concurrent_freezes_leave_exactly_one(tmp_path: Path) -> None:
    results: list[str] = []

    def attempt(seed: int) -> None:
        try:
            results.append(write_manifest(tmp_path, _content(tmp_path, seed=seed)).audit_id)
        except FileExistsError:
            results.append("refused")

    threads = [threading.Thread(target=attempt, args=(s,)) for s in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results.count("refused") == 7
    assert load_manifest(tmp_path).audit_id in results


def test_edited_manifest_is_refused(tmp_path: Path) -> None:
    write_manifest(tmp_path, _content(tmp_path, delta=0.05))
    path = tmp_path / MANIFEST_FILE
    data = json.loads(path.read_text())
    data["delta"] = 0.2
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="changed after freeze"):
        load_manifest(tmp_path)


def test_load_refusals(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_manifest(tmp_path / "nowhere")
    (tmp_path / "topic.qrels").write_text("q 0 d 1\n")   # a file given for the folder: not "missing"
    with pytest.raises(FileNotFoundError, match="topic.qrels is a file, not an audit folder: give the"):
        load_manifest(tmp_path / "topic.qrels")
    with pytest.raises(FileNotFoundError, match="run freeze first"):
        load_manifest(tmp_path)
    (tmp_path / MANIFEST_FILE).write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_manifest(tmp_path)
    (tmp_path / MANIFEST_FILE).write_text('{"schema": "other"}')
    with pytest.raises(ValueError, match="not a rankcut audit manifest"):
        load_manifest(tmp_path)
    (tmp_path / MANIFEST_FILE).write_text(json.dumps({"schema": SCHEMA, "schema_version": 99}))
    with pytest.raises(ValueError, match="schema version 99"):
        load_manifest(tmp_path)


def test_changed_or_missing_input_is_named(tmp_path: Path) -> None:
    m = write_manifest(tmp_path, _content(tmp_path))
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d2 1 2.0 t\n")
    with pytest.raises(ValueError, match=r"--run .*run\.txt changed after the audit was frozen"):
        check_inputs(m)
    run.unlink()
    with pytest.raises(ValueError, match=r"--run run\.txt \(sha256 [0-9a-f]{12}\) is missing"):
        check_inputs(m)


def test_describe_file(tmp_path: Path) -> None:
    f = tmp_path / "x.txt"
    f.write_bytes(b"abc")
    d = describe_file(f, "--cut", tmp_path / "audit")
    assert d["path"] == "../x.txt"   # relative to the audit folder
    assert d["sha256"] == sha256_file(f) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert d["bytes"] == 3 and d["option"] == "--cut"
    with pytest.raises(FileNotFoundError, match="--cut .* does not exist"):
        describe_file(tmp_path / "nope", "--cut", tmp_path)
    with pytest.raises(FileNotFoundError, match="is a folder"):
        describe_file(tmp_path, "--cut", tmp_path)


def test_atomic_write_keeps_old_file_on_failure(tmp_path: Path) -> None:
    path = tmp_path / "plan.json"
    write_json_atomic(path, {"a": 1})
    with pytest.raises(ValueError):
        write_json_atomic(path, {"a": float("nan")})
    assert json.loads(path.read_text()) == {"a": 1}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan.json"]
    with pytest.raises(FileNotFoundError, match="does not exist"):
        write_json_atomic(tmp_path / "missing" / "x.json", {})

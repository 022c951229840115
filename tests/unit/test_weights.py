"""Weights as safetensors bytes, version directories and references (rlar/policy/weights.py)."""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path

import pytest
import torch

from rlar.policy.weights import (
    WeightsIntegrityError,
    WeightsRef,
    latest_weights_ref,
    objstore_uri,
    parse_objstore_uri,
    read_manifest,
    read_weights,
    read_weights_bytes,
    safetensors_bytes_to_tensors,
    state_dict_to_safetensors_bytes,
    verify_weights_bytes,
    write_weights_dir,
)

torch.set_num_threads(1)


def _tensors(seed: int = 0) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    base = torch.randn(6, 4, generator=g)
    return {
        "a.weight": torch.randn(3, 5, generator=g),
        "b.weight": torch.randn(4, 4, generator=g).to(torch.bfloat16),
        "c.index": torch.arange(7, dtype=torch.int64),
        "d.transposed": base.t(),  # non-contiguous
        "e.slice": base[2:4],  # a view covering part of a storage
    }


def test_safetensors_bytes_round_trip_preserves_names_dtypes_and_values() -> None:
    src = _tensors()
    out = safetensors_bytes_to_tensors(state_dict_to_safetensors_bytes(src))
    assert set(out) == set(src)
    for name, t in src.items():
        assert out[name].dtype == t.dtype
        assert torch.equal(out[name], t), name


def test_serialising_accepts_an_iterable_of_pairs_like_named_parameters() -> None:
    model = torch.nn.Linear(3, 2)
    out = safetensors_bytes_to_tensors(state_dict_to_safetensors_bytes(model.named_parameters()))
    assert torch.equal(out["weight"], model.weight.detach())
    assert torch.equal(out["bias"], model.bias.detach())


def test_a_tied_alias_is_dropped_and_other_shared_storage_is_cloned() -> None:
    emb = torch.randn(10, 4)
    tensors = {"embed.weight": emb, "lm_head.weight": emb, "first_row": emb[0]}
    out = safetensors_bytes_to_tensors(state_dict_to_safetensors_bytes(tensors))
    assert set(out) == {"embed.weight", "first_row"}
    assert torch.equal(out["first_row"], emb[0])


def test_serialising_rejects_an_empty_or_repeated_update() -> None:
    with pytest.raises(ValueError):
        state_dict_to_safetensors_bytes({})
    with pytest.raises(ValueError, match="duplicate"):
        state_dict_to_safetensors_bytes([("x", torch.zeros(2)), ("x", torch.ones(2))])


def test_write_weights_dir_writes_a_verified_version_with_a_manifest(tmp_path: Path) -> None:
    src = _tensors()
    ref = write_weights_dir(tmp_path, 3, src)
    vdir = tmp_path / "v00000003"
    assert Path(ref.uri) == vdir / "model.safetensors"
    data = Path(ref.uri).read_bytes()
    assert ref.size_bytes == len(data)
    assert ref.sha256 == hashlib.sha256(data).hexdigest()
    manifest = json.loads((vdir / "manifest.json").read_text())
    assert (
        manifest["version"] == 3 and manifest["sha256"] == ref.sha256 and manifest["size_bytes"] == len(data)
    )
    assert manifest["dtype"] == "mixed:bfloat16,float32,int64"
    assert manifest["num_tensors"] == len(src)
    assert read_manifest(vdir) == ref
    out = read_weights(ref)
    assert all(torch.equal(out[k], v) for k, v in src.items())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["v00000003"]  # no temporary left behind


def test_rewriting_a_version_is_idempotent_but_different_bytes_are_refused(tmp_path: Path) -> None:
    ref = write_weights_dir(tmp_path, 1, _tensors(0))
    assert write_weights_dir(tmp_path, 1, _tensors(0)) == ref
    with pytest.raises(FileExistsError):
        write_weights_dir(tmp_path, 1, _tensors(1))
    assert read_weights(ref)["a.weight"].equal(_tensors(0)["a.weight"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["v00000001"]


def test_latest_weights_ref_ignores_unfinished_temporary_directories(tmp_path: Path) -> None:
    assert latest_weights_ref(tmp_path) is None
    write_weights_dir(tmp_path, 2, _tensors(2))
    ref10 = write_weights_dir(tmp_path, 10, _tensors(10))
    write_weights_dir(tmp_path, 9, _tensors(9))
    stale = tmp_path / ".tmp-v00000011-crashed"  # what a writer killed mid-write leaves
    stale.mkdir()
    (stale / "model.safetensors").write_bytes(b"partial")
    assert latest_weights_ref(tmp_path) == ref10


def test_a_concurrent_reader_only_ever_sees_complete_versions(tmp_path: Path) -> None:
    big = {f"layer{i}.weight": torch.full((256, 256), float(i)) for i in range(8)}  # ~2 MB per version
    stop = threading.Event()
    seen: list[int] = []
    errors: list[BaseException] = []

    def reader() -> None:
        while not stop.is_set():
            try:
                ref = latest_weights_ref(tmp_path)
                if ref is not None:
                    out = read_weights(ref)  # verifies size and sha256
                    assert out["layer0.weight"][0, 0].item() == ref.version
                    seen.append(ref.version)
            except BaseException as e:
                errors.append(e)
                return

    t = threading.Thread(target=reader)
    t.start()
    try:
        for v in range(12):
            write_weights_dir(tmp_path, v, {**big, "layer0.weight": torch.full((256, 256), float(v))})
    finally:
        stop.set()
        t.join(timeout=30)
    assert not errors, errors[0]
    assert seen and seen == sorted(seen)


def test_corrupted_or_truncated_weights_fail_the_integrity_check(tmp_path: Path) -> None:
    ref = write_weights_dir(tmp_path, 0, _tensors())
    path = Path(ref.uri)
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(WeightsIntegrityError) as info:
        read_weights(ref)
    assert info.value.ref == ref and info.value.size_bytes == ref.size_bytes
    path.write_bytes(bytes(data[:-10]))
    with pytest.raises(WeightsIntegrityError):
        read_weights_bytes(ref)


def test_weights_ref_round_trips_through_a_json_dict_and_describes_bytes() -> None:
    data = state_dict_to_safetensors_bytes(_tensors())
    ref = WeightsRef.of_bytes(data, version=7, uri=objstore_uri("weights", "v7"))
    back = WeightsRef.from_dict(json.loads(json.dumps(ref.to_dict())))
    assert back == ref
    assert back.is_objstore and parse_objstore_uri(back.uri) == ("weights", "v7")
    verify_weights_bytes(back, data)
    with pytest.raises(WeightsIntegrityError):
        verify_weights_bytes(back, data + b"\0")


def test_object_store_refs_are_left_to_the_transport() -> None:
    ref = WeightsRef(version=1, uri="objstore://weights/v1", sha256="0" * 64, size_bytes=1)
    with pytest.raises(ValueError, match="object-store"):
        read_weights_bytes(ref)
    for bad in ("objstore://nobucket", "objstore:///name", "file:///x"):
        with pytest.raises(ValueError):
            parse_objstore_uri(bad)

"""The one disk cache (riskreport.io.cache): what it gives back, and what it refuses to give back."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from riskreport.io.cache import Cache, CacheWarning, cache_key


def test_keys_follow_every_part_and_values_round_trip(tmp_path):
    cache = Cache("scores", tmp_path)
    key = cache_key("scores", run="r1", versions={"ir_measures": "0.3.1"})
    assert key != cache_key("scores", run="r1", versions={"ir_measures": "0.4"})
    assert key != cache_key("bayes", run="r1", versions={"ir_measures": "0.3.1"})
    assert cache.get(key) is None  # a miss, silently
    cache.put(key, {"topics": ["1", "2"], "values": [0.5, 1.0]})
    assert cache.get(key) == {"topics": ["1", "2"], "values": [0.5, 1.0]}
    arrays = {"draws": np.arange(6.0).reshape(2, 3), "ids": np.array([1, 2], dtype=np.int32)}
    cache.put_arrays(key, arrays, {"n": 2})
    stored, meta = cache.get_arrays(key)
    assert meta == {"n": 2} and all(
        np.array_equal(stored[k], v) and stored[k].dtype == v.dtype for k, v in arrays.items()
    )
    assert not [p for p in tmp_path.rglob("*") if p.name.startswith(".")]  # no temporary file left


@pytest.mark.parametrize("damage", ["truncated", "edited", "foreign", "other kind"])
def test_damaged_or_foreign_json_entries_are_misses_with_a_warning(tmp_path, damage):
    cache = Cache("scores", tmp_path)
    key, other = cache_key("scores", run="a"), cache_key("scores", run="b")
    cache.put(key, {"values": [1.0]})
    cache.put(other, {"values": [2.0]})
    path = cache.path(key)
    if damage == "truncated":
        path.write_bytes(path.read_bytes()[:20])
    elif damage == "edited":
        entry = json.loads(path.read_text())
        entry["value"]["values"] = [9.0]
        path.write_text(json.dumps(entry))
    elif damage == "foreign":  # another key's whole, valid entry in this key's place
        path.write_bytes(cache.path(other).read_bytes())
    else:  # the same key's entry, written by another use of the cache
        Cache("bayes", tmp_path).put(key, {"values": [1.0]})
    with pytest.warns(CacheWarning, match=str(path)):
        assert cache.get(key) is None
    cache.put(key, {"values": [1.0]})  # recomputed and rewritten whole
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cache.get(key) == {"values": [1.0]}


def test_damaged_array_entries_are_misses_with_a_warning(tmp_path):
    cache = Cache("bayes", tmp_path)
    key = cache_key("bayes", data="x")
    cache.put_arrays(key, {"draws": np.linspace(0, 1, 1000)}, {"n": 1000})
    path = cache.path(key, ".npz")
    blob = bytearray(path.read_bytes())
    blob[len(blob) // 2] ^= 0xFF
    path.write_bytes(bytes(blob))
    with pytest.warns(CacheWarning, match="damaged"):
        assert cache.get_arrays(key) is None


READ_ONLY = """
import json, sys, warnings
from riskreport.io.cache import Cache, cache_key
cache = Cache("scores", sys.argv[1])
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    hit = cache.get(cache_key("scores", run="a"))
    cache.put(cache_key("scores", run="new"), {"values": [3.0]})      # cannot be written: said, not raised
    cache.put(cache_key("scores", run="newer"), {"values": [4.0]})    # said once per folder
print(json.dumps({"hit": hit, "warnings": [str(w.message) for w in caught]}))
"""


def _read_only(folders, on: bool) -> bool:
    """Make folders unwritable for real: permission bits for a user, the immutable attribute for root
    (whom permission bits do not stop). False when this file system cannot."""
    if os.geteuid() != 0:
        for folder in folders:
            folder.chmod(0o555 if on else 0o755)
        return True
    done = subprocess.run(["chattr", "+i" if on else "-i", *map(str, folders)], capture_output=True)
    return done.returncode == 0


def test_a_read_only_cache_folder_is_read_and_never_fatal(tmp_path):
    folder = tmp_path / "cache"
    Cache("scores", folder).put(cache_key("scores", run="a"), {"values": [1.0]})
    folders = [folder, *(p for p in folder.rglob("*") if p.is_dir())]
    try:
        if not _read_only(folders, True):
            pytest.skip("this file system cannot make a folder read-only for root (chattr +i)")
        done = subprocess.run(
            [sys.executable, "-c", READ_ONLY, str(folder)], capture_output=True, text=True, timeout=120
        )
    finally:
        _read_only(folders, False)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["hit"] == {"values": [1.0]}
    assert len(result["warnings"]) == 1 and "cannot write the scores cache" in result["warnings"][0]
    assert not Cache("scores", folder).path(cache_key("scores", run="new")).exists()


NUMBA_RUN = """
import numpy as np
from riskreport.io.letor import write_letor, read_letor
from riskreport.ltr.objectives import make_objective
import sys
path = write_letor(sys.argv[1], np.array([2, 0, 1, 0]), np.array([1, 1, 2, 2]), np.ones((4, 2)))
data = read_letor(path)
make_objective("u-cro", data.labels, data.bounds, np.zeros((1, 2)), 1.0)(np.zeros(4), None)
from riskreport.ltr import _lambdas
from riskreport.io import _letor_scan
print(_lambdas.discounts.stats.cache_path)
print(_letor_scan.scan.stats.cache_path)
"""


def _compiled_files(folder):
    return {p: p.stat().st_mtime_ns for p in folder.rglob("*.nb[ic]")}


def test_numba_keeps_riskreport_kernels_in_the_riskreport_cache_not_beside_the_source(tmp_path):
    """An installed package must not write into site-packages: the LETOR scanner's and the LTR kernels' machine
    code (numba cache=True) goes to <cache>/numba, and nothing appears or changes in riskreport's folders."""
    import riskreport

    package = Path(riskreport.__file__).parent
    before = _compiled_files(package)
    env = {**os.environ, "RISKREPORT_CACHE": str(tmp_path / "cache")}
    done = subprocess.run(
        [sys.executable, "-c", NUMBA_RUN, str(tmp_path / "tiny.txt")], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr
    paths = [Path(line) for line in done.stdout.split()]
    assert all(p.is_relative_to(tmp_path / "cache" / "numba") for p in paths), paths
    assert {p.parent.name.split("_")[0] for p in (tmp_path / "cache" / "numba").rglob("*.nbi")} == {"io", "ltr"}
    assert _compiled_files(package) == before


def test_a_numba_cache_folder_others_can_write_is_not_used(tmp_path, monkeypatch):
    """numba's index files are pickles: a cache root writable by others gives a private temporary folder."""
    from riskreport.io import cache

    root = tmp_path / "shared"
    root.mkdir()
    monkeypatch.setenv("RISKREPORT_CACHE", str(root))
    monkeypatch.setattr(cache, "_NUMBA_ROOT", [])
    assert cache._numba_root() == root / "numba"
    root.chmod(0o777)
    monkeypatch.setattr(cache, "_NUMBA_ROOT", [])
    chosen = cache._numba_root()
    assert not chosen.is_relative_to(root) and chosen.name.startswith("riskreport-numba-")
    assert chosen.stat().st_uid == os.getuid() and not chosen.stat().st_mode & 0o077


def test_private_entries_are_checked_up_to_the_cache_root_and_read_as_checked(tmp_path, monkeypatch):
    """A cache entry read as trusted data: an entry is read only when it and every folder up to
    the cache root are this user's and no one else can write them; a root others can write (`chmod o+w`, not
    the entry) was not checked before. The file read is the one checked (no symbolic link followed)."""
    from riskreport.io.cache import cache_root, open_private

    root = tmp_path / "cache"
    monkeypatch.setenv("RISKREPORT_CACHE", str(root))
    store = Cache("compiled", root / "bayes" / "compiled")
    key = cache_key("compiled", model="m")
    store.put_arrays(key, {"code": np.arange(4, dtype=np.uint8)}, {"n": 1})
    entry = store.path(key, ".npz")
    for folder in (root, *entry.parents[:3]):
        folder.chmod(0o755)
    entry.chmod(0o644)
    assert cache_root(store.folder) == root and cache_root(tmp_path / "elsewhere") == tmp_path / "elsewhere"
    assert store.get_arrays(key, private_to=root) is not None
    for item, mode in ((root, 0o757), (entry.parent, 0o775), (entry, 0o664)):
        item.chmod(mode)
        assert store.get_arrays(key, private_to=root) is None, item
        item.chmod(0o755 if item.is_dir() else 0o644)
    moved = entry.with_name("elsewhere.npz")
    entry.rename(moved)
    entry.symlink_to(moved)  # a link is not opened: what would be read is not what the folder holds
    assert open_private(entry, root) is None and store.get_arrays(key, private_to=root) is None
    assert open_private(moved, tmp_path / "not-above") is None  # a top that is not above the entry

"""Campaign scale: 250 topics x 300 runs through the whole risk_report template, memory and page size bounded."""

import gzip
import os
import resource
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "benchmarks"))
from bench_scale import make_collection  # noqa: E402


def test_300_runs_250_topics_stay_within_memory_and_size(tmp_path):
    collection = tmp_path / "scale"
    collection.mkdir()
    make_collection(collection, runs=300, topics=250, depth=20)
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "riskreport",
            "run",
            "--collection",
            str(collection),
            "--quiet",
            "--out",
            str(tmp_path / "report"),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "RISKREPORT_CACHE": str(tmp_path / "cache")},
    )
    assert done.returncode == 0, done.stderr
    peak_mb = max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024
    assert peak_mb < 4096
    page = tmp_path / "report" / "report.html"
    assert page.stat().st_size < 20e6
    text = page.read_text()
    assert "Figures show the 12 riskiest of the 299 challengers" in text  # figures summarised, CSVs complete
    assert sum(1 for _ in gzip.open(tmp_path / "report" / "tables" / "topics.csv.gz", "rt")) == 1 + 299 * 250 * 5

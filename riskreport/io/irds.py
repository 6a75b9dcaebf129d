"""Qrels from ir_datasets (`irds:<id>`, the optional extra `riskreport[irds]`): read quietly, and one clear error
when ir_datasets is missing, does not know the id, or cannot provide the qrels offline."""

from __future__ import annotations

import contextlib
import logging
import os
import re

import pandas as pd

from riskreport.errors import ParameterError, RiskReportError

IRDS_PREFIX = "irds:"


def irds_knows(dataset_id: str) -> bool:
    """Whether ir_datasets is installed and has a dataset of this id (a bare id, without `irds:`)."""
    try:
        import ir_datasets

        ir_datasets.registry[dataset_id]
    except (ImportError, KeyError):
        return False
    return True


def irds_qrels(dataset_id: str) -> pd.DataFrame:
    """The qrels of an ir_datasets dataset (`ir_datasets.load(id).qrels_iter()`), or a clear error when
    ir_datasets is missing, does not know the id, or cannot provide the qrels offline."""
    try:
        import ir_datasets
    except ImportError:
        raise ParameterError(
            f"qrels {dataset_id!r} name an ir_datasets dataset, and ir_datasets is not installed: "
            "pip install 'riskreport[irds]' (or give a TREC qrels file)."
        ) from None
    with _quiet_irds():
        return _irds_rows(ir_datasets, dataset_id)


def _irds_rows(ir_datasets, dataset_id: str) -> pd.DataFrame:
    try:
        dataset = ir_datasets.load(dataset_id)
    except KeyError:
        raise ParameterError(
            f"qrels {dataset_id!r}: neither a file nor a dataset ir_datasets knows "
            "(see https://ir-datasets.com for the ids)."
        ) from None
    if not dataset.has_qrels():
        raise ParameterError(
            f"qrels {dataset_id!r}: this ir_datasets dataset has no qrels (pick a dataset with "
            "judgments, e.g. one ending in the topic set's name)."
        )
    try:
        rows = [(q.query_id, q.doc_id, q.relevance) for q in dataset.qrels_iter()]
    except Exception as error:  # noqa: BLE001 - ir_datasets raises many kinds (download, HTTP, missing file) for one reason
        home = os.environ.get("IR_DATASETS_HOME", "~/.ir_datasets")
        raise RiskReportError(
            f"qrels {dataset_id!r} are not available offline: ir_datasets could not read them from {home} "
            f"({_download_failure(error)}). Fetch them once with network access "
            f"(`ir_datasets export {dataset_id} qrels > qrels.txt`) and give that file, or set IR_DATASETS_HOME "
            "to where they were downloaded."
        ) from None
    if not rows:
        raise ParameterError(f"qrels {dataset_id!r}: ir_datasets returned no judgments.")
    table = pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"]).astype({"query_id": str, "doc_id": str})
    return table.drop_duplicates(["query_id", "doc_id"], keep="last").reset_index(drop=True)


@contextlib.contextmanager
def _quiet_irds():
    """ir_datasets logs each download attempt on stderr through handlers of its own ([INFO] ... 9 lines offline):
    silenced while it reads the qrels; what matters is in the one error `irds_qrels` raises."""
    logging.disable(logging.WARNING)
    try:
        yield
    finally:
        logging.disable(logging.NOTSET)


def _download_failure(error: Exception) -> str:
    """ir_datasets' download error in a line: the local copy it looked for and why each source failed (its
    `RuntimeError('All download sources failed', [(source, error), ...])` embeds object reprs)."""
    tried = error.args[1] if len(error.args) == 2 and isinstance(error.args[1], list) else None
    if not tried:
        text = re.sub(r"<[^<>]* at 0x[0-9a-f]+>", "…", str(error))
        return f"{type(error).__name__}: " + (text if len(text) < 160 else text[:160].rsplit(" ", 1)[0] + " …")
    reasons = []
    for _, failure in tried:
        if isinstance(failure, FileNotFoundError):
            reasons.append(f"no local copy at {failure.args[0] if failure.args else failure.filename}")
        else:
            reasons.append(f"download failed ({type(failure).__name__})")
    return "; ".join(dict.fromkeys(reasons))

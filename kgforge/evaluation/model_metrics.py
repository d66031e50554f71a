"""BERTScore over a local model (``--model-path DIR``), through the ``bert-score`` package (Zhang et al.
2020's own implementation): the extra ``kgforge[bertscore]`` installs it with ``transformers``. Nothing is
downloaded: the folder must hold a transformers model and its tokenizer (``save_pretrained``); the layer used
is the model's last (``num_layers`` = its ``num_hidden_layers``), no idf weighting, no baseline rescaling —
the report states the model and layer, as BERTScore's own hash does.

BLEURT (Sellam et al. 2020) over a local PyTorch port of a BLEURT checkpoint (``--bleurt-path DIR``; the extra
``kgforge[bleurt]`` installs ``transformers`` and ``torch``): a sequence-pair regression model whose single
output for the pair (reference, candidate), tokenised as one pair, is the score. The ports that load through
``AutoModelForSequenceClassification`` (a BERT with one regression output, as the HF ports of BLEURT-base/large
are) run; the ``bleurt-pytorch`` layout (``model_type`` "bleurt", BLEURT-20) needs that package's own classes and
is refused by name rather than half-loaded.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from kgforge.core.errors import ArgumentError, KgforgeError
from kgforge.core.records import Record

BLEURT_EXTRA = "pip install 'kgforge[bleurt]' (transformers and torch)"
EXTRA = "pip install 'kgforge[bertscore]' (bert-score and transformers)"


@dataclass(frozen=True)
class BertScoreModel(Record):
    """What BERTScore used (the report's ``model``, beside its path): the layer, no idf, no rescaling."""

    layer: int
    idf: bool
    rescaled: bool
    package: str  # bert-score and its version


@dataclass(frozen=True)
class BertScores:
    """BERTScore's precision, recall and F1 per response, and what was used."""

    p: list[float]
    r: list[float]
    f1: list[float]
    model: BertScoreModel


@dataclass(frozen=True)
class BleurtModel(Record):
    """What BLEURT used (the report's ``bleurt``, beside its path)."""

    max_length: int  # tokens one (gold, prediction) pair may have
    pairs_truncated: int  # pairs cut to that length
    architecture: str  # the transformers class that ran


@dataclass(frozen=True)
class BleurtScores:
    """BLEURT's score per response (the model's logit for the pair gold, prediction), and what was used."""

    score: list[float]
    model: BleurtModel


def _local_model(model_path: Path | str, flag: str) -> Path:
    """``model_path`` as a folder holding a transformers model (nothing is ever downloaded)."""
    model_path = Path(model_path)
    if not (model_path / "config.json").is_file():
        raise ArgumentError(flag, f"{model_path} holds no transformers model (no config.json)")
    return model_path


def bert_score(model_path: Path, predictions: list[str], golds: list[str], batch_size: int = 64) -> BertScores:
    """``p``, ``r``, ``f1`` per response and ``model`` (what was used)."""
    model_path = _local_model(model_path, "--model-path")
    try:
        import bert_score as package
        from transformers import AutoConfig
    except ImportError:
        raise KgforgeError(f"BERTScore needs the extra 'bertscore': {EXTRA}") from None
    layers = int(AutoConfig.from_pretrained(model_path, local_files_only=True).num_hidden_layers)
    try:
        precision, recall, f1 = package.score(
            predictions,
            golds,
            model_type=str(model_path),
            num_layers=layers,
            batch_size=batch_size,
            device="cpu",
            idf=False,
            verbose=False,
        )
    except OverflowError:  # the tokenizer has no length limit: bert-score truncates at model_max_length
        raise KgforgeError(
            f"{model_path}: the tokenizer states no model_max_length (set it in tokenizer_config.json, e.g. 512)"
        ) from None
    return BertScores(
        precision.tolist(),
        recall.tolist(),
        f1.tolist(),
        BertScoreModel(layers, idf=False, rescaled=False, package=f"bert-score {getattr(package, '__version__', '?')}"),
    )


def bleurt(model_path: Path, predictions: list[str], golds: list[str], batch_size: int = 32) -> BleurtScores:
    """``score`` per response (the model's logit for the pair gold, prediction) and ``model`` (what was used,
    how many pairs were cut to the model's length)."""
    model_path = _local_model(model_path, "--bleurt-path")
    try:
        import torch
        from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer
    except ImportError:
        raise KgforgeError(f"BLEURT needs the extra 'bleurt': {BLEURT_EXTRA}") from None
    _refuse_bleurt_pytorch_layout(model_path)
    config = AutoConfig.from_pretrained(model_path, local_files_only=True)
    if int(getattr(config, "num_labels", 0)) != 1:
        raise ArgumentError(
            "--bleurt-path",
            f"{model_path} is not a BLEURT port with one regression output that "
            "transformers loads (AutoModelForSequenceClassification, num_labels 1)",
        )
    tokenizer = AutoTokenizer.from_pretrained(model_path, local_files_only=True)
    network = AutoModelForSequenceClassification.from_pretrained(model_path, local_files_only=True).eval()
    limit = _pair_limit(tokenizer.model_max_length, getattr(config, "max_position_embeddings", None))
    scores: list[float] = []
    cut = 0
    with torch.inference_mode():
        for start in range(0, len(predictions), batch_size):
            references, candidates = golds[start : start + batch_size], predictions[start : start + batch_size]
            whole = tokenizer(references, candidates, truncation=False)["input_ids"]
            cut += sum(len(ids) > limit for ids in whole)
            encoded = tokenizer(
                references, candidates, padding=True, truncation=True, max_length=limit, return_tensors="pt"
            )
            scores.extend(network(**encoded).logits[:, 0].tolist())
    return BleurtScores(scores, BleurtModel(limit, cut, type(network).__name__))


def _refuse_bleurt_pytorch_layout(model_path: Path) -> None:
    """The ``bleurt-pytorch`` layout's ``model_type`` is unknown to transformers: say so instead of its error."""
    try:
        kind = json.loads((model_path / "config.json").read_text(encoding="utf-8")).get("model_type")
    except (OSError, ValueError) as error:
        raise ArgumentError("--bleurt-path", f"{model_path / 'config.json'}: {error}") from None
    if kind == "bleurt":
        raise ArgumentError(
            "--bleurt-path",
            f"{model_path} is in the bleurt-pytorch layout (model_type 'bleurt', "
            "e.g. BLEURT-20), which transformers cannot load; use a port saved "
            "as BertForSequenceClassification with one output",
        )


def _pair_limit(tokenizer_limit: int, positions: int | None) -> int:
    """Tokens one pair may have: the tokenizer's limit, never more than the model has positions for (a
    tokenizer saved without a limit states a huge one)."""
    return min(tokenizer_limit, positions) if positions else tokenizer_limit

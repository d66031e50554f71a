"""BERTScore over a local model (``--model-path DIR``), through the ``bert-score`` package (Zhang et al.
2020's own implementation): the extra ``kgforge[bertscore]`` installs it with ``transformers``. Nothing is
downloaded: the folder must hold a transformers model and its tokenizer (``save_pretrained``); the layer used
is the model's last (``num_layers`` = its ``num_hidden_layers``), no idf weighting, no baseline rescaling —
the report states the model and layer, as BERTScore's own hash does.

BLEURT is not provided: it needs a BLEURT checkpoint (a fine-tuned regression head) and its own package, and
there is no offline way to check a port of it against the reference here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kgforge.evaluation._kgforge import ArgumentError, KgforgeError

EXTRA = "pip install 'kgforge[bertscore]' (bert-score and transformers)"


def bert_score(model_path: Path, predictions: list[str], golds: list[str], batch_size: int = 64) -> dict[str, Any]:
    """``p``, ``r``, ``f1`` per response (lists of floats) and ``model`` (what was used)."""
    model_path = Path(model_path)
    if not (model_path / "config.json").is_file():
        raise ArgumentError("--model-path", f"{model_path} holds no transformers model (no config.json)")
    try:
        import bert_score as package
        from transformers import AutoConfig
    except ImportError:
        raise KgforgeError(f"BERTScore needs the extra 'bertscore': {EXTRA}") from None
    layers = int(AutoConfig.from_pretrained(model_path, local_files_only=True).num_hidden_layers)
    try:
        precision, recall, f1 = package.score(predictions, golds, model_type=str(model_path), num_layers=layers,
                                              batch_size=batch_size, device="cpu", idf=False, verbose=False)
    except OverflowError:  # the tokenizer has no length limit: bert-score truncates at model_max_length
        raise KgforgeError(f"{model_path}: the tokenizer states no model_max_length (set it in "
                           "tokenizer_config.json, e.g. 512)") from None
    return {"p": precision.tolist(), "r": recall.tolist(), "f1": f1.tolist(),
            "model": {"layer": layers, "idf": False, "rescaled": False,
                      "package": f"bert-score {getattr(package, '__version__', '?')}"}}

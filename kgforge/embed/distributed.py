"""`kgforge embed --devices N --nodes M`: data-parallel training through PyTorch Lightning.

The module is PyKEEN's Lightning integration (:class:`pykeen.contrib.lightning.LitModule`: the
PyKEEN model as a LightningModule, Adam, PyKEEN's ``post_parameter_update`` after each step) with
kgforge's objective in place of PyKEEN's sLCWA loss — each batch's positives against negatives shared
by the batch, both sides, cross-entropy (:func:`kgforge.embed._cross_entropy_loss`) — so a model
trained on N devices is the model one device trains. ``--batch-size`` stays the global batch: each
of the ``devices × nodes`` processes takes its share, Lightning's ``DistributedSampler`` gives each a
disjoint part of every epoch, and DDP averages the gradients (gloo on CPU, NCCL on GPU).

Processes are spawned on this machine (``ddp_spawn``); on several machines, run the same command on
each with ``MASTER_ADDR``, ``MASTER_PORT`` and ``NODE_RANK`` set (or under SLURM / torchrun, which
Lightning recognises). Lightning checkpoints to ``last.ckpt`` in the bundle's work folder every
``checkpoint_seconds``; ``--resume`` continues from it. Node 0 writes the bundle, in the same format
as single-device training.
"""

from __future__ import annotations

import json
import math
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytorch_lightning
import torch
from pykeen.contrib.lightning import LitModule
from pykeen.datasets import EagerDataset
from pykeen.models import ERModel
from pykeen.triples import CoreTriplesFactory
from pytorch_lightning.callbacks import ModelCheckpoint
from pytorch_lightning.strategies import DDPStrategy

from kgforge.core.files import write_json_atomic
from kgforge.core.processes import main_module_hidden
from kgforge.embed.config import EmbedError, ResolvedEmbedConfig, TripleSet
from kgforge.embed.steps import TrainState, _cross_entropy_loss, _step_generator

CHECKPOINT = "last.ckpt"
LOSSES = "losses.json"


class SharedNegativesModule(LitModule):
    """PyKEEN's LitModule trained on kgforge's shared-negatives cross-entropy."""

    # LitModule types its model as any PyKEEN Model; it is the ERModel given here (PyKEEN's resolver returns a
    # model instance as it is), which the shared-negatives loss scores with
    model: ERModel

    def __init__(
        self,
        model: ERModel,
        dataset: EagerDataset,
        config: ResolvedEmbedConfig,
        fingerprint: str,
        processes: int,
        losses_file: Path,
    ) -> None:
        super().__init__(
            dataset=dataset,
            model=model,
            batch_size=max(1, math.ceil(config.batch_size / processes)),
            learning_rate=config.learning_rate,
            optimizer="adam",
        )
        self.seed, self.num_negatives, self.threads = config.seed, config.num_negatives, config.threads
        self.fingerprint = fingerprint
        self.losses: list[float] = []  # mean training loss of each finished epoch, over every process's batches
        self.losses_file = losses_file  # where the first process leaves them for the process that started training
        self._epoch_loss: torch.Tensor | float = 0.0
        self._epoch_batches = 0

    def setup(self, stage: str) -> None:
        if self.threads:  # the machine's threads shared among the processes on it
            torch.set_num_threads(max(1, self.threads // max(1, self.trainer.num_devices)))

    def _step(self, batch: torch.Tensor, prefix: str) -> torch.Tensor:
        model = self.model
        negatives = None
        if model.num_entities > self.num_negatives:
            step = self.global_step * self.trainer.world_size + self.global_rank  # each process its own negatives
            negatives = torch.randint(
                model.num_entities,
                (self.num_negatives,),
                generator=_step_generator(self.seed, self.current_epoch, step),
            ).to(batch.device)
        loss = _cross_entropy_loss(model, batch, negatives) + model.collect_regularization_term()
        self.log(f"{prefix}_loss", loss, prog_bar=True)
        if prefix == "train":  # summed on the device: no host sync per step; NCCL reduces device tensors only
            self._epoch_loss = self._epoch_loss + loss.detach()
            self._epoch_batches += 1
        return loss

    def on_train_epoch_end(self) -> None:
        mean = torch.as_tensor(self._epoch_loss, device=self.device) / max(1, self._epoch_batches)
        self.losses.append(float(self.trainer.strategy.reduce(mean, reduce_op="mean")))
        self._epoch_loss, self._epoch_batches = 0.0, 0
        if self.global_rank == 0:
            write_json_atomic(self.losses_file, self.losses, durable=False)
        self.log("epochs_completed", float(self.current_epoch + 1), sync_dist=False)

    def _dataloader(self, triples_factory: CoreTriplesFactory, shuffle: bool = False) -> torch.utils.data.DataLoader:
        # the triples tensor is the dataset: a map-style one (``__getitem__``, ``__len__``), batched to (n, 3)
        # rows as the loss reads them; torch's stub types a dataset only as its Dataset class
        triples = triples_factory.mapped_triples
        return torch.utils.data.DataLoader(triples, batch_size=self.batch_size, shuffle=shuffle)  # type: ignore[arg-type]

    def on_save_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        checkpoint["kgforge_fingerprint"] = self.fingerprint
        checkpoint["kgforge_losses"] = list(self.losses)

    def on_load_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        if checkpoint.get("kgforge_fingerprint") != self.fingerprint:
            raise EmbedError(
                "--resume: the checkpoint was made for another graph, split, model or batch size; "
                "run without --resume to start over"
            )
        self.losses = list(checkpoint.get("kgforge_losses", []))


class EpochAlignedCheckpoint(ModelCheckpoint):
    """Lightning's timed ModelCheckpoint, with the save that falls on an epoch's last batch moved after the
    epoch closes.

    Lightning writes a timed checkpoint in ``on_train_batch_end``; on the epoch's last batch that comes
    before ``on_train_epoch_end``, where the epoch's mean loss joins the curve, yet Lightning resumes from
    such a checkpoint with the epoch counted as finished (it marks an epoch saved on its last batch
    completed). The resumed run never closed that epoch, so its curve ended one epoch short of the epochs
    trained (``7 == 6 + 2`` in the kill test). Lightning overwrote that checkpoint at the epoch's end only
    when the kill did not land in between. Here a save due on the last batch waits for the epoch's end
    (after the curve has it); every other batch saves as before."""

    def on_train_batch_end(self, trainer: pytorch_lightning.Trainer, *args: Any, **kwargs: Any) -> None:
        if trainer.fit_loop.epoch_loop.batch_progress.is_last_batch:  # the same on every process
            return
        super().on_train_batch_end(trainer, *args, **kwargs)

    def on_train_epoch_end(self, trainer: pytorch_lightning.Trainer, pl_module: Any) -> None:
        if self._should_skip_saving_checkpoint(trainer):
            return
        now = time.monotonic()
        interval = self._train_time_interval.total_seconds() if self._train_time_interval else 0.0
        due = self._last_time_checked is None or now - self._last_time_checked >= interval
        if trainer.strategy.broadcast(due):  # every process decides as the first one does
            self._last_time_checked = now
            self._save_last_checkpoint(trainer, self._monitor_candidates(trainer))


def fit_distributed(
    model: ERModel,
    triple_set: TripleSet,
    config: ResolvedEmbedConfig,
    device: torch.device,
    work_dir: Path,
    fingerprint: str,
    resume: bool,
    progress: bool,
) -> tuple[TrainState, dict[str, int] | None, str | None, int]:
    """Train ``model`` on ``config.devices × config.nodes`` processes; ``(state, resumed_from, stopped_by,
    node_rank)``. In this process ``model`` ends with the weights the processes trained."""
    processes = config.devices * config.nodes
    dataset = EagerDataset(triple_set.factory(), triple_set.factory("test"))
    losses_file = work_dir / LOSSES
    losses_file.unlink(missing_ok=True)
    module = SharedNegativesModule(model, dataset, config, fingerprint, processes, losses_file)
    checkpoint = work_dir / CHECKPOINT
    resumed_from = None
    if resume and checkpoint.exists():
        saved = torch.load(checkpoint, map_location="cpu", weights_only=False)
        resumed_from = {"epoch": int(saved["epoch"]), "batch": 0, "global_step": int(saved["global_step"])}
    pytorch_lightning.seed_everything(config.seed, workers=True, verbose=False)
    trainer = pytorch_lightning.Trainer(
        accelerator="gpu" if device.type == "cuda" else "cpu",
        devices=config.devices,
        num_nodes=config.nodes,
        strategy=DDPStrategy(start_method="spawn", process_group_backend="nccl" if device.type == "cuda" else "gloo"),
        precision="bf16-mixed" if config.precision == "bf16" else "32-true",
        max_epochs=config.epochs,
        max_time=timedelta(seconds=config.max_time) if config.max_time else None,
        callbacks=[
            EpochAlignedCheckpoint(
                dirpath=work_dir,
                filename="lightning",
                save_last=True,
                save_top_k=0,
                train_time_interval=timedelta(seconds=max(config.checkpoint_seconds, 0.001)),
            )
        ],
        logger=False,
        enable_progress_bar=progress,
        enable_model_summary=False,
        limit_val_batches=0,
        num_sanity_val_steps=0,
        deterministic=False,
        use_distributed_sampler=True,
    )
    started = time.perf_counter()
    with main_module_hidden():  # ddp_spawn's processes must not run the caller's script again
        trainer.fit(module, ckpt_path=str(checkpoint) if resumed_from else None)
    elapsed = time.perf_counter() - started
    epochs = int(trainer.callback_metrics.get("epochs_completed", torch.tensor(0.0)).item())
    first = resumed_from["epoch"] if resumed_from else 0
    losses = json.loads(losses_file.read_text(encoding="utf-8")) if losses_file.exists() else []
    state = TrainState(
        epoch=epochs,
        batch=0,
        elapsed=elapsed,
        losses=losses,
        triples_seen=max(0, epochs - first) * triple_set.factory().num_triples,
        last_loss=float(trainer.callback_metrics.get("train_loss", torch.tensor(math.nan)).item()),
    )
    stopped_by = f"--max-time {config.max_time:g}s" if config.max_time and epochs < config.epochs else None
    return state, resumed_from, stopped_by, trainer.node_rank

"""The distributed trainer's checkpoints agree with its loss curve: none is written after an epoch's last
batch but before the epoch's loss joined the curve (Lightning resumes from such a checkpoint with the epoch
counted as finished, and the resumed curve came out one epoch short), and a run resumed from any of them
ends with one loss per epoch. A tiny Lightning model on the CPU, a timed checkpoint after every batch."""

from __future__ import annotations

from datetime import timedelta

import pytest

pytorch_lightning = pytest.importorskip("pytorch_lightning")
import torch  # noqa: E402

from kgforge.embed.distributed import EpochAlignedCheckpoint  # noqa: E402

pytestmark = pytest.mark.slow  # PyTorch Lightning runs, resumed from their checkpoints

BATCHES = 4


class Tiny(pytorch_lightning.LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(1))
        self.losses: list[float] = []
        self.saves: list[tuple[int, int, bool]] = []  # (epoch, losses in the checkpoint, written on a last batch)

    def training_step(self, batch: torch.Tensor, index: int) -> torch.Tensor:
        return ((self.weight * batch) ** 2).mean()

    def on_train_epoch_end(self) -> None:
        self.losses.append(float(self.weight.detach()))

    def train_dataloader(self) -> torch.utils.data.DataLoader:
        return torch.utils.data.DataLoader(torch.ones(BATCHES, 1), batch_size=1)

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(self.parameters(), lr=0.01)

    def on_save_checkpoint(self, checkpoint: dict) -> None:
        checkpoint["losses"] = list(self.losses)
        last = self.trainer.fit_loop.epoch_loop.batch_progress.is_last_batch
        in_epoch_end = len(self.losses) == self.trainer.current_epoch + 1
        self.saves.append((self.trainer.current_epoch, len(self.losses), last and not in_epoch_end))

    def on_load_checkpoint(self, checkpoint: dict) -> None:
        self.losses = list(checkpoint["losses"])


def fit(folder, epochs: int, resume: bool = False) -> Tiny:
    module = Tiny()
    trainer = pytorch_lightning.Trainer(
        accelerator="cpu",
        devices=1,
        max_epochs=epochs,
        logger=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        limit_val_batches=0,
        num_sanity_val_steps=0,
        callbacks=[
            EpochAlignedCheckpoint(
                dirpath=folder,
                filename="lightning",
                save_last=True,
                save_top_k=0,
                train_time_interval=timedelta(microseconds=1),
            )
        ],
    )
    trainer.fit(module, ckpt_path=str(folder / "last.ckpt") if resume else None)
    return module


def test_no_checkpoint_falls_between_an_epochs_last_batch_and_its_loss(tmp_path):
    module = fit(tmp_path, epochs=3)
    assert module.saves, "the timed checkpoint never saved"
    assert not [save for save in module.saves if save[2]], module.saves
    assert {epoch for epoch, _, _ in module.saves} == {0, 1, 2}  # a save in every epoch, the epoch ends included


def test_a_resumed_run_has_one_loss_per_epoch(tmp_path):
    fit(tmp_path, epochs=2)
    resumed = fit(tmp_path, epochs=4, resume=True)
    assert len(resumed.losses) == 4

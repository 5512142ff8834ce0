"""The paper's ablation baseline: the RLM's encoder, a pooled state and a linear head, trained with MSE.

Everything but the output side matches ``RegressionLM``: the learned byte-level
BPE, the encoder (same ``model`` options), the same ``Trainer``, ``BatchSampler``
and ``training`` options. Two variants, as in the paper's table:

* ``normalize=True`` ("normalized"): targets min-max scaled to [0, 1] per
  (task, objective) on the training set (``TargetScaler``); predictions are
  scaled back.
* ``normalize=False`` ("raw"): the head regresses the raw values. When targets
  span decades this trains badly; that is the point of the ablation, so nothing
  here rescues it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from coderlm.data.checks import check_texts
from coderlm.devices import resolve_device
from coderlm.evaluation.baselines.length import check_fit_inputs, check_fitted, check_tasks
from coderlm.model.config import ModelConfig, size_options
from coderlm.model.regression_head import RegressionHead, TargetScaler
from coderlm.text.bpe import BPETokenizer
from coderlm.training.batches import TokenTensors, length_sorted_batches
from coderlm.training.config import TrainConfig
from coderlm.training.objective import LossOf
from coderlm.training.sampling import BatchSampler
from coderlm.training.trainer import Trainer


class RegressionHeadRegressor:
    """Encoder -> masked mean -> LayerNorm -> Linear(k), MSE on (optionally scaled) targets.

    Args:
        normalize: min-max scale targets per (task, objective) to [0, 1] (see module doc).
        vocab_size: size of the input BPE vocabulary learned in ``fit``.
        pretokenize: BPE merge boundaries, ``"code"`` or ``"lines"`` (as in ``RegressionLM``).
        max_input_len: encoder context in tokens; longer texts keep their first tokens.
        model: ``ModelConfig`` options, e.g. ``{"encoder_dim": 128}`` (decoder options are
            accepted, so a ``RegressionLM``'s dict can be reused, and ignored).
        training: ``TrainConfig`` options, e.g. ``{"steps": 2000}``.
        batch_size: inputs per forward pass when predicting.
        device: torch device, e.g. ``"cpu"``, ``"cuda"`` or ``"auto"``.
    """

    def __init__(
        self,
        normalize: bool = True,
        vocab_size: int = 4096,
        pretokenize: str = "code",
        max_input_len: int = 512,
        model: dict | None = None,
        training: dict | None = None,
        batch_size: int = 64,
        device: str = "cpu",
    ) -> None:
        self.normalize = normalize
        self.vocab_size = vocab_size
        self.pretokenize = pretokenize
        self.max_input_len = max_input_len
        self.model = model
        self.training = training
        self.batch_size = batch_size
        self.device = device

    def fit(self, texts: Sequence[str], targets, tasks: Sequence[str] | None = None) -> RegressionHeadRegressor:
        """Learn the BPE vocabulary, then train the model; missing (NaN) objectives get zero loss weight."""
        texts, values, tasks = check_fit_inputs(texts, targets, tasks)
        model_options = size_options(self.model, type(self).__name__)
        train_config = TrainConfig.from_dict(dict(self.training or {}))

        present = ~np.isnan(values)
        scaler = TargetScaler().fit(values, tasks) if self.normalize else None
        scaled = scaler.transform(values, tasks) if scaler is not None else values
        tokenizer = BPETokenizer.train(texts, self.vocab_size, pretokenize=self.pretokenize)
        tokens = tokenizer.encode(texts, self.max_input_len)
        config = ModelConfig(
            input_vocab_size=tokenizer.vocab_size,
            output_vocab_size=1,
            output_length=1,
            max_input_len=self.max_input_len,
            pad_id=tokenizer.pad_id,
            **model_options,
        )
        torch.manual_seed(train_config.seed)
        model = RegressionHead(config, values.shape[1])
        device = torch.device(self._device())
        data = TokenTensors(tokens, np.where(present, scaled, 0.0), present, device)
        sampler = BatchSampler(
            len(texts),
            train_config.batch_size,
            train_config.seed,
            tasks,
            train_config.task_sampling,
            train_config.task_temperature,
            tokens.mask.sum(1) if train_config.bucket_by_length else None,
        )
        result = Trainer(LossOf(model), train_config, sampler, data.batch, device=device).run()
        model.eval()
        self.model_, self.tokenizer_, self.scaler_ = model, tokenizer, scaler
        self.loss_history_ = result.losses
        self.fit_report_ = {
            "examples": len(texts),
            "truncated": tokens.truncated,
            "steps": result.step,
            "train_seconds": round(result.seconds, 3),
        }
        return self

    @torch.no_grad()
    def predict(self, texts: Sequence[str], tasks: Sequence[str] | None = None) -> np.ndarray:
        """Predictions (n, k) float64, scaled back to target units when ``normalize``."""
        check_fitted(self, "model_")
        texts = check_texts(texts)
        tasks = check_tasks(tasks, len(texts))
        tokens = self.tokenizer_.encode(texts, self.max_input_len)
        device = torch.device(self._device())
        self.model_.to(device).eval()
        kept = tokens.mask.sum(1)
        out = np.empty((len(texts), self.model_.head.out_features), dtype=np.float64)
        for rows in length_sorted_batches(kept, self.batch_size):
            width = max(int(kept[rows].max()), 1)
            ids = torch.from_numpy(tokens.ids[rows, :width]).to(device)
            mask = torch.from_numpy(tokens.mask[rows, :width]).to(device)
            out[rows] = self.model_(ids, mask).float().cpu().numpy()
        return self.scaler_.inverse(out, tasks) if self.scaler_ is not None else out

    def _device(self) -> str:
        return resolve_device(self.device)

"""Data-parallel training when launched by ``torchrun`` (gloo on CPU, nccl on CUDA)."""

from __future__ import annotations

import dataclasses
import os
import sys

import torch
import torch.distributed as dist


@dataclasses.dataclass(frozen=True)
class DistInfo:
    rank: int = 0
    world_size: int = 1
    local_rank: int = 0

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @property
    def enabled(self) -> bool:
        return self.world_size > 1


def setup_distributed(device: torch.device) -> DistInfo:
    """Join the process group that ``torchrun`` describes in the environment; single process otherwise."""
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    if world_size <= 1:
        return DistInfo()
    info = DistInfo(int(os.environ["RANK"]), world_size, int(os.environ.get("LOCAL_RANK", "0")))
    if not dist.is_initialized():
        dist.init_process_group(backend="nccl" if device.type == "cuda" else "gloo")
    return info


def mean_across_ranks(value: float, info: DistInfo, device: torch.device) -> float:
    if not info.enabled:
        return value
    tensor = torch.tensor([value], dtype=torch.float64, device=device)
    dist.all_reduce(tensor)
    return tensor.item() / info.world_size


def barrier(info: DistInfo) -> None:
    if info.enabled:
        dist.barrier()


def shutdown_distributed() -> bool:
    """Leave the process group cleanly: wait for every rank, then destroy it. True if there was one.

    A process that was in a gloo group should then end with ``os._exit`` (see
    ``exit_process``): on torch 2.13 its normal interpreter exit sometimes aborts in a
    C++ destructor ("terminate called without an active exception") after all the
    work is done, which would turn a finished run into a failed one.
    """
    if dist.is_available() and dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()
        return True
    return False


def exit_process(code: int) -> None:
    """Flush Python's streams and end the process now, skipping C++ static destructors."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)

"""A decoding automaton compiled to tensors.

States are small integers; ``transitions[state, token]`` is the next state or
-1 when the token is forbidden there. One decoding step for a whole batch is a
gather of the allowed-token rows and a ``masked_fill``; advancing is a second
gather. No Python runs per sample.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable, Sequence

import torch


@dataclasses.dataclass(frozen=True, eq=False)
class Automaton:
    transitions: torch.Tensor  # (num_states, vocab) int64, -1 = forbidden
    start: int
    final: int

    @property
    def allowed(self) -> torch.Tensor:  # (num_states, vocab) bool
        return self.transitions >= 0

    @property
    def num_states(self) -> int:
        return self.transitions.shape[0]

    def to(self, device: torch.device | str) -> Automaton:
        return dataclasses.replace(self, transitions=self.transitions.to(device))

    def mask_logits(self, logits: torch.Tensor, state: torch.Tensor) -> torch.Tensor:
        """Set forbidden tokens' logits to -inf. logits (..., V), state (...)."""
        return logits.masked_fill(self.transitions[state] < 0, float("-inf"))

    def advance(self, state: torch.Tensor, token: torch.Tensor) -> torch.Tensor:
        """Next state for each (state, token) pair; -1 where the token was forbidden."""
        return self.transitions[state, token]

    def states_along(self, ids: torch.Tensor) -> torch.Tensor:
        """States *before* each token of ids (..., L); -1 once a token was forbidden."""
        state = torch.full(ids.shape[:-1], self.start, dtype=torch.long, device=ids.device)
        states = []
        for t in range(ids.shape[-1]):
            states.append(state)
            nxt = self.transitions[state.clamp(min=0), ids[..., t]]
            state = torch.where(state < 0, state, nxt)
        states.append(state)
        return torch.stack(states, dim=-1)

    def accepts(self, ids: torch.Tensor) -> torch.Tensor:
        """Whether each row of ids (..., L) is a complete valid sequence."""
        return self.states_along(ids)[..., -1] == self.final


def compile_automaton(
    vocab: Sequence[str],
    start: Hashable,
    step: Callable[[Hashable, str], Hashable | None],
    is_final: Callable[[Hashable], bool],
) -> Automaton:
    """Enumerate the states reachable from ``start`` and tabulate ``step``.

    Exactly one final state must be reachable; it has no outgoing transitions.
    """
    index: dict[Hashable, int] = {start: 0}
    rows: list[list[int]] = []
    frontier = [start]
    while frontier:
        state = frontier.pop(0)
        row = []
        for token in vocab:
            nxt = step(state, token)
            if nxt is None:
                row.append(-1)
                continue
            if nxt not in index:
                index[nxt] = len(index)
                frontier.append(nxt)
            row.append(index[nxt])
        rows.append(row)
    finals = [i for s, i in index.items() if is_final(s)]
    if len(finals) != 1:
        raise ValueError(f"automaton must have exactly one final state, found {len(finals)}")
    table = torch.tensor(rows, dtype=torch.long)
    if (table[finals[0]] >= 0).any():
        raise ValueError("the final state of an automaton must not accept more tokens")
    return Automaton(transitions=table, start=0, final=finals[0])

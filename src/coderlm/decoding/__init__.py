"""Constrained sampling, scoring, point estimates and quantiles."""

from coderlm.decoding.estimates import central_interval, density, point_estimate, quantiles
from coderlm.decoding.sampler import allowed_log_probs, log_prob, sample_tokens

__all__ = [
    "allowed_log_probs",
    "central_interval",
    "density",
    "log_prob",
    "point_estimate",
    "quantiles",
    "sample_tokens",
]

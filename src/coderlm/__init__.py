"""coderlm: predict what code costs before it runs, with a Regression Language Model."""

__version__ = "0.1.0"

from coderlm.estimator import RegressionLM
from coderlm.numbers import IEEE, P10, NumberCodec

__all__ = ["IEEE", "P10", "NumberCodec", "RegressionLM", "__version__"]

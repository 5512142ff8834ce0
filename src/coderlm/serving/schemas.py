"""The request and response bodies of the API (pydantic): FastAPI checks requests against them
(422 naming the field) and documents them at ``/docs``.

Unknown fields are refused, so a misspelt option is an error rather than silently ignored.
Non-finite numbers (a special value such as NaN, or a statistic of no finite sample) are
``null`` in responses, as in ``coderlm predict``'s output.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Base64Bytes, BaseModel, ConfigDict, Field, model_validator

Level = Annotated[float, Field(ge=0, le=1)]
Number = float | None


class Input(BaseModel):
    """One input: a text, or an ``.onnx`` file's bytes (base64) read as the collector writes its graph."""

    model_config = ConfigDict(extra="forbid")

    text: str | None = Field(None, min_length=1, description="the text the model reads")
    onnx_base64: Base64Bytes | None = Field(None, description="an .onnx file, base64-encoded")

    @model_validator(mode="after")
    def _exactly_one(self) -> Input:
        if (self.text is None) == (self.onnx_base64 is None):
            raise ValueError("give exactly one of 'text' or 'onnx_base64'")
        return self


class PredictRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"example": {"inputs": [{"text": "x = 1\n"}]}})

    inputs: list[Input] = Field(min_length=1, description="the inputs, answered in this order")
    model: str | None = Field(None, description="a served model's name (default: the first one)")
    num_samples: int | None = Field(None, ge=1, description="samples per input (default: the model's)")
    level: float | None = Field(None, gt=0, lt=1, description="also give central intervals at this level")
    quantiles: list[Level] | None = Field(None, min_length=1, description="also give these quantiles")
    return_samples: bool = Field(False, description="also give every sample")
    point: Literal["median", "exact"] = Field(
        "median",
        description="median: of the samples; exact: the median of the model's distribution itself, walked in "
        "one decode without sampling (deterministic, cheaper; the median alone: no level, quantiles or samples)",
    )
    seed: int | None = Field(
        None,
        ge=0,
        lt=2**63,
        description="sample this request alone with this seed: the result equals the in-process "
        "RegressionLM.load(RUN).sample(texts, num_samples, seed=seed)",
    )


class InputResult(BaseModel):
    """Per objective: the median, and when asked the interval [lower, upper], quantiles, samples."""

    median: dict[str, Number]
    interval: dict[str, list[Number]] | None = None
    quantiles: dict[str, list[Number]] | None = None
    samples: dict[str, list[Number]] | None = None


class PredictResponse(BaseModel):
    model: str
    objectives: list[str]
    num_samples: int
    level: float | None
    quantiles: list[float] | None
    seed: int | None
    results: list[InputResult] = Field(description="one per input, in order")


class ModelsResponse(BaseModel):
    models: list[dict[str, Any]] = Field(
        description="per model: name, objectives, number format, training summary, evaluation metrics if found"
    )


class Health(BaseModel):
    status: str
    models: list[str]

"""``coderlm.client.Client`` against a real server: the shapes and values of ``RegressionLM``'s own calls."""

from __future__ import annotations

import numpy as np
import pytest

from coderlm import RegressionLM
from coderlm.client import Client, ServerError
from coderlm.decoding import central_interval, point_estimate, quantiles
from tests.serving.conftest import TEXTS, single_thread


def test_client_results_equal_in_process_ones_for_the_same_seed(server, model_dir):
    with single_thread():
        samples = RegressionLM.load(model_dir).sample(TEXTS, 64, seed=3)  # the model's own num_samples
    with Client(server.url) as client:
        np.testing.assert_array_equal(client.predict(TEXTS, seed=3), point_estimate(samples))
        np.testing.assert_array_equal(client.predict_interval(TEXTS, 0.8, seed=3), central_interval(samples, 0.8))
        got = client.predict_quantiles(TEXTS, [0.2, 0.7], seed=3)
        np.testing.assert_array_equal(got, quantiles(samples, np.array([0.2, 0.7])))
        np.testing.assert_array_equal(client.sample(TEXTS, seed=3), samples)


def test_client_shapes_without_a_seed_and_another_model(server):
    with Client(server.url, model="model") as client:
        assert client.predict(TEXTS).shape == (4, 1)
        assert client.predict_interval(TEXTS).shape == (4, 1, 2)
        assert client.predict_quantiles(TEXTS, [0.1, 0.5, 0.9]).shape == (4, 1, 3)
        assert client.sample(TEXTS, num_samples=5).shape == (4, 5, 1)
        assert [m["name"] for m in client.models()] == ["tiny", "model"]
        assert client.health()["status"] == "ok"


def test_client_errors_carry_the_status_and_the_servers_message(server):
    with Client(server.url, model="nope") as client, pytest.raises(ServerError) as error:
        client.predict(["x = 1\n"])
    assert error.value.status == 404 and error.value.message.startswith("model 'nope' is not served")
    with Client(server.url) as client:
        with pytest.raises(ServerError, match="413: 9 inputs is over the limit of 8"):
            client.predict([f"x = {i}\n" for i in range(9)])
        with pytest.raises(ValueError, match="texts must be a sequence of strings"):
            client.predict("x = 1\n")  # checked before sending, as RegressionLM does

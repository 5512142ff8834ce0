import numpy as np
import pytest

from coderlm.decoding import central_interval, density, point_estimate, quantiles


@pytest.fixture
def samples():
    rng = np.random.default_rng(0)
    out = rng.normal(size=(4, 1001, 2))
    out[:, :, 1] = np.exp(out[:, :, 1])
    out[3, :, 0] = np.nan  # an input whose samples were all <NaN>
    out[2, :10, 0] = np.nan  # some NaN samples are ignored
    out[1, :501, 1] = np.nan  # most samples <NaN>: the objective does not apply to the input
    return out


def test_point_estimates(samples):
    median = point_estimate(samples)
    assert median.shape == (4, 2)
    np.testing.assert_allclose(median[0], np.median(samples[0], axis=0))
    np.testing.assert_allclose(median[2, 0], np.median(samples[2, 10:, 0]))
    assert np.isnan(median[3, 0]) and np.isnan(median[1, 1]) and np.isfinite(median[1, 0])
    np.testing.assert_allclose(point_estimate(samples, "mean")[0], samples[0].mean(0))
    assert np.isnan(point_estimate(samples, "mean")[1, 1])
    half = samples[1:2, :1000, 1:2].copy()
    half[0, :500, 0] = np.nan  # exactly half: still a number
    np.testing.assert_allclose(point_estimate(half), [[np.median(half[0, 500:, 0])]])
    with pytest.raises(ValueError, match="point must be one of"):
        point_estimate(samples, "mode")


def test_trimmed_mean_is_scipys_interquartile_mean_without_nan(samples):
    from scipy.stats import trim_mean

    trimmed = point_estimate(samples, "trimmed")
    np.testing.assert_allclose(trimmed[0], trim_mean(samples[0], 0.25, axis=0))
    np.testing.assert_allclose(trimmed[2, 0], trim_mean(samples[2, 10:, 0], 0.25))
    assert np.isnan(trimmed[3, 0]) and np.isnan(trimmed[1, 1])


def test_trimmed_mean_ignores_wrong_exponents_and_breaks_median_ties():
    a = np.array([12.0] * 40 + [13.0] * 20 + [1e4] * 4)  # four samples a thousand times too large
    b = np.array([12.0] * 60 + [13.0] * 4)
    samples = np.stack([a, b])[:, :, None]
    assert point_estimate(samples, "median")[0, 0] == point_estimate(samples, "median")[1, 0] == 12.0  # a tie
    trimmed = point_estimate(samples, "trimmed")[:, 0]
    assert 12.0 < trimmed[0] < 13.0 and trimmed[1] == 12.0  # a's samples lean higher; the 1e4s are cut


def test_quantiles_and_intervals(samples):
    q = quantiles(samples, np.array([0.05, 0.5, 0.95]))
    assert q.shape == (4, 2, 3)
    assert (np.diff(q[[0, 2]], axis=-1) >= 0).all() and (np.diff(q[1, 0]) >= 0).all()
    np.testing.assert_allclose(q[..., 1], point_estimate(samples))
    assert np.isnan(q[1, 1]).all() and np.isfinite(q[1, 0]).all()  # mostly <NaN>: no interval either
    assert quantiles(samples, 0.5).shape == (4, 2)
    interval = central_interval(samples, 0.9)
    np.testing.assert_allclose(interval, q[..., [0, 2]])
    inside = (samples[0] >= interval[0, :, 0]) & (samples[0] <= interval[0, :, 1])
    assert abs(inside.mean() - 0.9) < 0.01
    for level in (0, 1, 1.5):
        with pytest.raises(ValueError, match="interval level"):
            central_interval(samples, level)
    with pytest.raises(ValueError, match="quantile levels"):
        quantiles(samples, 1.2)


def test_density_integrates_to_one(samples):
    grid = np.linspace(-6, 6, 2001)
    dens = density(samples[0, :, 0], grid)
    assert abs(np.trapezoid(dens, grid) - 1) < 1e-2
    log_grid = np.logspace(-3, 3, 4001)
    log_dens = density(samples[0, :, 1], log_grid, log_scale=True)
    assert abs(np.trapezoid(log_dens, log_grid) - 1) < 2e-2
    with pytest.raises(ValueError, match="two distinct"):
        density(np.ones(5), grid)

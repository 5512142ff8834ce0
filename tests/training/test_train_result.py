"""What a training run reports about itself (``TrainResult``)."""

from coderlm.training.trainer import TrainResult


def _result(val_losses, step=8, **kwargs):
    best = min((loss for _, loss in val_losses), default=None)
    return TrainResult(step, [], val_losses, best, kwargs.pop("stopped_early", False), 1.0, **kwargs)


def test_a_run_whose_last_evaluation_is_its_best_ended_while_improving():
    assert _result([(4, 0.5), (8, 0.3)]).best_at_end()
    assert _result([(4, 0.5), (8, 0.3)]).report("spearman")["best_at_end"] is True
    assert not _result([(4, 0.3), (8, 0.5)]).best_at_end()  # the best came before the end
    assert not _result([(8, 0.3)]).best_at_end()  # one evaluation says nothing about a trend
    assert not _result([]).best_at_end()  # no validation
    assert not _result([(4, 0.5), (8, 0.3)], stopped_early=True).best_at_end()
    assert not _result([(4, 0.5), (8, 0.3)], out_of_time=True).best_at_end()
    assert not _result([(4, 0.5), (6, 0.3)], step=8).best_at_end()  # steps ran after the last evaluation

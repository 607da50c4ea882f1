"""Experiment grids (config x variant x seed) on serial / process-pool / Ray back ends, JSONL results with
resumption, reports and plots. `servicerobot run` and `servicerobot report` are the command-line faces."""

from servicerobot.experiments.config import EnvConfig, EpisodeSpec, ExperimentConfig, load_config
from servicerobot.experiments.episode import run_episode
from servicerobot.experiments.runner import run_grid

__all__ = ["EnvConfig", "EpisodeSpec", "ExperimentConfig", "load_config", "run_episode", "run_grid"]

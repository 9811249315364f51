"""Synthetic evaluation data from a user's own memories (`memgauge synth`): seed 002's eight
query categories with graded judgments, expected answers and hard negatives, written by a
model, near-duplicates removed, checked by a critic, every rejection counted by reason."""

from memgauge.synth.build import SynthConfig, synthesize
from memgauge.synth.prompts import PROMPT_VERSION, prompt_hashes
from memgauge.synth.records import REASONS, Rejection, SynthReport

__all__ = [
    "PROMPT_VERSION",
    "REASONS",
    "Rejection",
    "SynthConfig",
    "SynthReport",
    "prompt_hashes",
    "synthesize",
]

"""Statistics: bootstrap CIs, paired significance tests, breakdowns, sample size."""

from memgauge.stats.bootstrap import (
    ConfidenceInterval,
    bootstrap_ci,
    bootstrap_cis,
    resample_means,
)
from memgauge.stats.breakdown import NO_GROUP, GroupStat, breakdown
from memgauge.stats.paired import (
    PairedComparison,
    compare_many,
    holm,
    paired_compare,
    randomization_test,
    significance_mark,
)
from memgauge.stats.samplesize import (
    SampleSize,
    minimum_detectable_effect,
    paired_t_power,
    sample_size_paired,
)

__all__ = [
    "NO_GROUP",
    "ConfidenceInterval",
    "GroupStat",
    "PairedComparison",
    "SampleSize",
    "bootstrap_ci",
    "bootstrap_cis",
    "breakdown",
    "compare_many",
    "holm",
    "minimum_detectable_effect",
    "paired_compare",
    "paired_t_power",
    "randomization_test",
    "resample_means",
    "sample_size_paired",
    "significance_mark",
]

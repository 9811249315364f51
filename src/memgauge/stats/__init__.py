"""Statistics: bootstrap CIs, paired significance tests, several systems compared (Tukey's
HSD, corrections), breakdowns, sample size."""

from memgauge.stats.bootstrap import (
    ConfidenceInterval,
    bootstrap_ci,
    bootstrap_cis,
    resample_means,
)
from memgauge.stats.breakdown import NO_GROUP, GroupStat, breakdown
from memgauge.stats.multiple import CORRECTIONS, Correction, adjust, bonferroni, holm
from memgauge.stats.paired import (
    PairedComparison,
    compare_many,
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
from memgauge.stats.systems import (
    FAMILIES,
    PAIRINGS,
    TEST_NAMES,
    TESTS,
    Family,
    Pairing,
    PairResult,
    SystemsComparison,
    SystemTest,
    compare_systems,
    resolve_correction,
)
from memgauge.stats.tukey import TukeyHSD, tukey_hsd_blocked

__all__ = [
    "CORRECTIONS",
    "FAMILIES",
    "NO_GROUP",
    "PAIRINGS",
    "TESTS",
    "TEST_NAMES",
    "ConfidenceInterval",
    "Correction",
    "Family",
    "GroupStat",
    "PairResult",
    "PairedComparison",
    "Pairing",
    "SampleSize",
    "SystemTest",
    "SystemsComparison",
    "TukeyHSD",
    "adjust",
    "bonferroni",
    "bootstrap_ci",
    "bootstrap_cis",
    "breakdown",
    "compare_many",
    "compare_systems",
    "holm",
    "minimum_detectable_effect",
    "paired_compare",
    "paired_t_power",
    "randomization_test",
    "resample_means",
    "resolve_correction",
    "sample_size_paired",
    "significance_mark",
    "tukey_hsd_blocked",
]

"""Statistics: bootstrap CIs, paired significance tests, several systems compared (Tukey's
HSD, corrections), breakdowns, sample size.

Each name loads on first use (as in `memgauge.api`): `memgauge sample-size` loads the sample-size
module alone, not the bootstrap's and the tests' NumPy and SciPy."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memgauge._util.lazy import lazy_table

# `breakdown` is also the name of its module, and importing a module binds its name in the
# package: bound here, the function is what `from memgauge.stats import breakdown` gives
from memgauge.stats.breakdown import breakdown

if TYPE_CHECKING:
    from memgauge.stats.bootstrap import (
        ConfidenceInterval,
        bootstrap_ci,
        bootstrap_cis,
        resample_means,
    )
    from memgauge.stats.breakdown import NO_GROUP, GroupStat
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

#: name -> the module that defines it
_LAZY: dict[str, str] = {
    "ConfidenceInterval": "memgauge.stats.bootstrap",
    "bootstrap_ci": "memgauge.stats.bootstrap",
    "bootstrap_cis": "memgauge.stats.bootstrap",
    "resample_means": "memgauge.stats.bootstrap",
    "NO_GROUP": "memgauge.stats.breakdown",
    "GroupStat": "memgauge.stats.breakdown",
    "CORRECTIONS": "memgauge.stats.multiple",
    "Correction": "memgauge.stats.multiple",
    "adjust": "memgauge.stats.multiple",
    "bonferroni": "memgauge.stats.multiple",
    "holm": "memgauge.stats.multiple",
    "PairedComparison": "memgauge.stats.paired",
    "compare_many": "memgauge.stats.paired",
    "paired_compare": "memgauge.stats.paired",
    "randomization_test": "memgauge.stats.paired",
    "significance_mark": "memgauge.stats.paired",
    "SampleSize": "memgauge.stats.samplesize",
    "minimum_detectable_effect": "memgauge.stats.samplesize",
    "paired_t_power": "memgauge.stats.samplesize",
    "sample_size_paired": "memgauge.stats.samplesize",
    "FAMILIES": "memgauge.stats.systems",
    "PAIRINGS": "memgauge.stats.systems",
    "TEST_NAMES": "memgauge.stats.systems",
    "TESTS": "memgauge.stats.systems",
    "Family": "memgauge.stats.systems",
    "Pairing": "memgauge.stats.systems",
    "PairResult": "memgauge.stats.systems",
    "SystemsComparison": "memgauge.stats.systems",
    "SystemTest": "memgauge.stats.systems",
    "compare_systems": "memgauge.stats.systems",
    "resolve_correction": "memgauge.stats.systems",
    "TukeyHSD": "memgauge.stats.tukey",
    "tukey_hsd_blocked": "memgauge.stats.tukey",
}


lazy_table(globals(), _LAZY)

"""Seed 002's telemetry quality fields of one logged search, computed by the query log's writer
thread (off the served request's path) from what the host logged:

    avgRelevanceScore = mean of the result scores
    topResultScore    = the highest result score
    boostImpactDelta  = mean(scores) - mean(scores before boosting), or what the host gave
    qualityProxy      = avgRelevance * 0.40 + topResult * 0.25 + countSaturation * 0.20
                        + latencyPenalty * 0.15

The seed names the proxy's weights, not its last two terms; memgauge reads them as
countSaturation = min(result_count / limit, 1) (the share of the results asked for that came
back; `limit` 10 when the host does not say) and latencyPenalty = max(0, 1 - latency_ms /
1000) (1 for an instant answer, 0 at a second or more). Scores are taken as 0-1 and clamped
there, so the proxy stays a 0-1 composite; it is a self-referential proxy of pipeline health,
not of relevance (the seed's own caveat). With no scores or no latency the proxy is None (n/a),
never 0. Standard library only: the logging SDK's writer imports it.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["DEFAULT_LIMIT", "LATENCY_ZERO_MS", "WEIGHTS", "boost_delta", "quality_fields"]

WEIGHTS = {"avg_relevance": 0.40, "top_result": 0.25, "count_saturation": 0.20, "latency": 0.15}
#: results asked for when the host does not say (countSaturation's denominator)
DEFAULT_LIMIT = 10
#: latency at which latencyPenalty reaches 0
LATENCY_ZERO_MS = 1000.0


def _clamp(x: float) -> float:
    return min(max(x, 0.0), 1.0)


def boost_delta(scores: Sequence[float] | None, unboosted: Sequence[float] | None) -> float | None:
    """mean(scores) - mean(unboosted): how much boosting moved the results' scores (None
    without both)."""
    if not scores or not unboosted:
        return None
    return sum(scores) / len(scores) - sum(unboosted) / len(unboosted)


def quality_fields(
    scores: Sequence[float] | None,
    result_count: int,
    latency_ms: float | None,
    limit: int | None = None,
) -> tuple[float | None, float | None, float | None]:
    """(avgRelevanceScore, topResultScore, qualityProxyScore) of one search (see the module
    docstring); None where there is nothing to compute them from."""
    if not scores:
        return None, None, None
    values = [float(s) for s in scores]
    avg, top = sum(values) / len(values), max(values)
    if latency_ms is None:
        return avg, top, None
    saturation = min(result_count / (limit or DEFAULT_LIMIT), 1.0)
    latency = max(0.0, 1.0 - float(latency_ms) / LATENCY_ZERO_MS)
    proxy = (
        WEIGHTS["avg_relevance"] * _clamp(avg)
        + WEIGHTS["top_result"] * _clamp(top)
        + WEIGHTS["count_saturation"] * saturation
        + WEIGHTS["latency"] * latency
    )
    return avg, top, proxy

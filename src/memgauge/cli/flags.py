"""`memgauge flags`: feature flags for A/B evaluation (seed 002 section 4.3). A flag, its shadow
experiment and its A/B test share one name: the flag's shadow data feeds the test
(`ab add NAME --from-shadow`, or by itself with --feed-ab), and graduation rolls it out to 100%."""

from __future__ import annotations

from typing import Any

import click
from rich.table import Table

from memgauge import api
from memgauge._util.jsonout import dumps_strict
from memgauge._util.listing import counted
from memgauge.api._flags import flag_created
from memgauge.cli._common import (
    apply_options,
    console,
    json_option,
    refuse_together,
    store_option,
)
from memgauge.cli._numbers import number
from memgauge.cli._shared_options import allow_unmeasured_option, mde_option, min_samples_option

__all__ = ["flags"]

_PERCENT = number(0, 100)


@click.group()
def flags() -> None:
    """Feature flags: rollout share, shadowing, and the A/B test that graduates them."""


def _settings(f: Any) -> Any:
    """The options `create` and `set` share (unset: default / unchanged)."""
    return apply_options(
        f,
        [
            click.option("--rollout", type=_PERCENT, help="Percent of identities it is on for."),
            click.option("--shadow/--no-shadow", default=None, help="Shadow queries (or not)."),
            click.option("--shadow-percent", type=_PERCENT, help="Percent of queries shadowed."),
            min_samples_option(2, None, "Pairs before graduation."),
            click.option("--graduation-threshold", type=number(), help="Improvement to graduate."),
            click.option(
                "--feed-ab/--no-feed-ab",
                default=None,
                help="The shadow runner feeds the flag's A/B test by itself.",
            ),
        ],
    )


def _print(rows: list[dict[str, Any]], as_json: bool) -> None:
    if as_json:
        click.echo(dumps_strict(rows))
        return
    table = Table(title="feature flags", title_justify="left")
    for col in ("flag", "rollout", "shadow", "min samples", "threshold", "feeds A/B", "test"):
        table.add_column(col)
    for r in rows:
        t = r["test"]
        test = (
            "none"
            if t is None
            else f"{t['status']} ({counted(t['pairs'], 'pair')}; {t['decision']})"
        )
        table.add_row(
            r["name"],
            f"{r['rollout_percent']:g}%",
            f"{r['shadow_percent']:g}%" if r["shadow_enabled"] else "off",
            str(r["min_samples"]),
            f"{r['graduation_threshold']:g}",
            "yes" if r["feed_ab"] else "no",
            test,
        )
    console().print(table)


@flags.command("list")
@click.argument("name", required=False)
@store_option
@json_option()
def list_(name: str | None, store_path: str | None, as_json: bool) -> None:
    """Every flag (or only NAME) with its A/B test's state."""
    _print(api.feature_flags(name, store=store_path), as_json)


#: option -> flag setting
_SETTINGS = {
    "rollout": "rollout_percent",
    "shadow": "shadow_enabled",
    "shadow_percent": "shadow_percent",
    "min_samples": "min_samples",
    "graduation_threshold": "graduation_threshold",
    "feed_ab": "feed_ab",
}


def _values(options: dict[str, Any]) -> dict[str, Any]:
    if options["shadow"] is False and options["shadow_percent"] is not None:
        refuse_together("--no-shadow", "--shadow-percent", "a flag not shadowing shadows no share")
    return {setting: options[option] for option, setting in _SETTINGS.items()}


@flags.command()
@click.argument("name")
@_settings
@click.option("--metric", help="The A/B test's metric (default MRR).")
@mde_option("--delta", "The A/B test's minimum detectable effect (default 0.05).", default=None)
@allow_unmeasured_option
@store_option
@json_option()
def create(
    name: str,
    metric: str | None,
    delta: float | None,
    allow_unmeasured: bool,
    store_path: str | None,
    as_json: bool,
    **options: Any,
) -> None:
    """Create flag NAME (rollout 0%, shadowing off, 100 samples, threshold 0.03 unless given)
    and its A/B test NAME, or keep the flag NAME of these settings."""
    test = {"metric": metric, "delta": delta, "allow_unmeasured": allow_unmeasured}
    row, created = flag_created(name, _values(options), test, store_path)
    if not created and not as_json:
        click.echo(f"kept feature flag {name!r} (it exists with these settings)", err=True)
    _print([row], as_json)


@flags.command("set")
@click.argument("name")
@_settings
@store_option
@json_option()
def set_(name: str, store_path: str | None, as_json: bool, **options: Any) -> None:
    """Change flag NAME's settings (those given)."""
    _print([api.set_flag(name, _values(options), store=store_path)], as_json)

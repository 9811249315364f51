"""`--dist loadgroup` groups by the `xdist_group` marks again under pytest 9.2.

pytest-xdist (3.8.0 and before) tells its scheduler a test's group by renaming the test on the
worker: `item._nodeid = f"{item.nodeid}@{group}"`, and its controller groups by what follows
the `@`. pytest 9.2 keeps a node's id as a structured `NodeId` (`item._id`) and `nodeid` reads
that, so the renaming no longer takes: no test is grouped, nothing fails, and every worker
builds again each store, server, browser and module fixture that tests/conftest.py groups so
that one worker builds it (pytest-dev/pytest-xdist#1386, open; its fix #1388 unmerged). After
xdist's own hook, a grouped test whose id does not end with its group gets the id xdist meant,
parsed into pytest's own `NodeId`; where xdist's renaming takes (pytest before 9.2, or a fixed
xdist) this does nothing.

Loaded by tests/conftest.py (`pytest_plugins`); a plug-in of its own so that pytester can load
it alone (`-p xdist_group_ids`), with nothing of memgauge imported.
"""

from __future__ import annotations

import pytest


def _group(item: pytest.Item) -> str | None:
    """The suffix xdist's worker gives a grouped test (its group names, sorted, joined by _)."""
    names = {
        str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
        for mark in item.iter_markers("xdist_group")
    }
    return "_".join(sorted(names)) if names else None


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not getattr(config.option, "loadgroup", False):
        return  # set on xdist's workers under --dist loadgroup, where they rename their tests
    for item in items:
        group = _group(item)
        wanted = f"{item.nodeid}@{group}"
        if group is None or item.nodeid.endswith(f"@{group}"):
            continue
        structured = getattr(item, "_id", None)
        if structured is None or not hasattr(type(structured), "parse"):
            continue  # an id this does not know how to set: leave it as it is
        item._id = type(structured).parse(wanted)  # type: ignore[attr-defined]

"""A user's memory module that imports a package not installed here (`memgauge_test_absent_dep`,
a name no index holds): the module is found, its own import fails."""

from __future__ import annotations

import memgauge_test_absent_dep  # type: ignore[import-not-found]  # noqa: F401


class Memory:
    pass

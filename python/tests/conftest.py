"""Shared fixtures: the tammi binary of this checkout (the CLI the module is
checked against) and a tiny training run whose shards and model the data
tests read."""

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def tammi_binary() -> str:
    """The `tammi` CLI: $TAMMI_BIN, else the release build of this checkout."""
    explicit = os.environ.get("TAMMI_BIN")
    if explicit:
        return explicit
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    binary = target / "release" / "tammi"
    if not binary.exists():
        pytest.fail(f"no tammi binary at {binary}: build it (cargo build --release) or set TAMMI_BIN")
    return str(binary)


@pytest.fixture(scope="session")
def tammi_bin() -> str:
    return tammi_binary()


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory, tammi_bin) -> Path:
    """Two generations of configs/tiny.toml with 16 games each: shards,
    their PDN, checkpoints and models, made by the CLI."""
    base = tmp_path_factory.mktemp("tiny-run")
    config = base / "tiny.toml"
    text = (ROOT / "configs" / "tiny.toml").read_text()
    text = text.replace("games_per_generation = 128", "games_per_generation = 16")
    config.write_text(text)
    run = base / "run"
    subprocess.run(
        [tammi_bin, "train", "--config", str(config), "--run", str(run), "--generations", "2"],
        check=True,
        capture_output=True,
        text=True,
    )
    return run

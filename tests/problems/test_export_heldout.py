"""Held-out checks of the folder exports: every card that datasets reads (training, verl, both
flavours, the HardTests pair) loads without a warning, sizes included, and every split
has num_bytes and passes datasets' own checks; the ICPC folder has a card naming its packages."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
import yaml

from problems.exporters import EXPORTERS
from problems.exporters.bundles import problems_select
from problems.exporters.icpc import PROBLEMTOOLS_CONFIG
from tests.problems.test_export import _catalogue

datasets = pytest.importorskip("datasets")
pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("kind", ["training", "verl", "verl-sandbox-fusion", "hardtests"])
def test_folder_cards_load_without_warnings(tmp_path: Path, kind: str, caplog: pytest.LogCaptureFixture,
                                            recwarn: pytest.WarningsRecorder):
    _catalogue()
    EXPORTERS[kind](problems=problems_select([])[0], out=tmp_path)
    card = yaml.safe_load((tmp_path / "README.md").read_text().split("---\n")[1])
    infos = card["dataset_info"] if isinstance(card["dataset_info"], list) else [card["dataset_info"]]
    configs = [i.get("config_name", "default") for i in infos]
    with caplog.at_level(logging.WARNING, logger="datasets"):
        for info, config in zip(infos, configs, strict=True):
            args = (str(tmp_path),) if config == "default" else (str(tmp_path), config)
            # all_checks: datasets compares the card's splits with what it reads.
            loaded = datasets.load_dataset(*args, verification_mode="all_checks")
            for split in info["splits"]:
                assert split["num_bytes"] > 0 and split["num_examples"] == len(loaded[split["name"]])
    assert not [r for r in caplog.records if r.name.startswith("datasets")], caplog.text
    assert not [w for w in recwarn if "datasets" in str(w.filename)], [str(w.message) for w in recwarn]


def test_the_icpc_folder_has_a_card(tmp_path: Path):
    _catalogue()
    summary = EXPORTERS["icpc"](problems=problems_select([])[0], out=tmp_path)
    card = (tmp_path / "README.md").read_text()
    # problemtools-config/ (a JDK before 21) is the check recipe's, not a package
    packages = sorted(p.name for p in tmp_path.iterdir() if p.is_dir() and p.name != PROBLEMTOOLS_CONFIG)
    assert packages and len(packages) == summary["problems"]
    assert all(name in card for name in packages)

"""A ``TZ`` that names no zone is said once at start (glibc reads it as UTC silently:
events were filed by the UTC day, log times were UTC's)."""

from __future__ import annotations

import logging

import pytest

from agent_client.settings import ClientSettings
from shared.local_zone import unknown_zone, warn_unknown_zone


@pytest.mark.parametrize(
    "value",
    ["Europe/Paris", ":Europe/Paris", "UTC", "Asia/Kolkata", "EST5EDT", "<+0330>-3:30",
     "CET-1CEST,M3.5.0,M10.5.0/3", "GMT+2", "/etc/localtime", "", None],
)  # fmt: skip
def test_zones_and_rules_are_known(value: str | None) -> None:
    assert not unknown_zone(value)


@pytest.mark.parametrize(
    "value", ["Not/AZone", "Europe/Pariss", "XYZ", "garbage", "America", "../etc", "/nope"]
)
def test_what_glibc_reads_as_utc_is_unknown(value: str) -> None:
    assert unknown_zone(value)


def test_the_agent_client_says_it_once_when_its_days_follow_the_machine(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    warn_unknown_zone.cache_clear()
    monkeypatch.setenv("TZ", "Europe/Pariss")
    environ = {"AGENT_CLIENT_WORKSPACE": "/tmp/w"}
    with caplog.at_level(logging.WARNING, logger="agent_client"):
        ClientSettings.resolve(environ=environ)
        ClientSettings.resolve(environ=environ)
        ClientSettings.resolve(environ={**environ, "AGENT_CLIENT_TZ": "Asia/Tokyo"})
    said = [r.getMessage() for r in caplog.records if "names no time zone" in r.getMessage()]
    assert said == [
        "TZ='Europe/Pariss' names no time zone: the C library reads it as UTC (local times "
        "and days are UTC's); set it to a zone such as Europe/Paris, or unset it"
    ]
    warn_unknown_zone.cache_clear()
    monkeypatch.setenv("TZ", "Europe/Paris")
    caplog.clear()
    ClientSettings.resolve(environ=environ)
    assert "names no time zone" not in caplog.text
    warn_unknown_zone.cache_clear()

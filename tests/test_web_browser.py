"""The web pages in a real browser: Debian's headless chromium driven by Playwright, against a
real `arena web` process reading the database of a real tournament while it runs.

Chromium is installed by `make install` (as root, when missing); nothing is downloaded by
Playwright. Set ARENA_SCREENSHOTS=DIR to save the screenshots shown in the README.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from test_e2e_support import ARENA, HEURISTIC_BOT, TEST_BOTS, arena, python_bot, tournament_with_web
from web_support import card_tokens, engine_steps, get, web_server, write_config

pytestmark = pytest.mark.e2e
CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
NAME = "livecup"
SHOTS = os.environ.get("ARENA_SCREENSHOTS")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: run `make install` as root (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def contest(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A tournament running in its own process (a calm bot that ponders 40 ms a decision
    against the heuristic bot: every hand costs it a decision and is worth at most 2 points,
    so no match is short; 1v1 and 2v2, both sides: 4 matches one at a time), and `arena web`
    on its database as soon as the tournament has written its first row. (With a bot that
    called and accepted at random, a fresh-clone run at load 14 ended all 4 matches before
    the browser had opened the page.)"""
    folder = tmp_path_factory.mktemp("live")
    bots = {"ponder": python_bot(TEST_BOTS / "pondering.py", "40", "calm"),
            "heuristic": python_bot(HEURISTIC_BOT)}
    config = write_config(folder, NAME, bots=bots, variants=("argentine-1v1", "argentine-2v2"),
                          games=2, concurrency=1)
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    with (folder / "tournament.log").open("w") as out:
        proc = subprocess.Popen([str(ARENA), "tournament", str(config), "--no-progress"],
                                cwd=folder, stdout=out, stderr=subprocess.STDOUT, env=env)
    database = folder / "arena.db"
    try:
        deadline = time.monotonic() + 120
        while not _has_tournament(database):
            assert proc.poll() is None, (folder / "tournament.log").read_text()
            assert time.monotonic() < deadline, "the tournament never started"
            time.sleep(0.05)
        with web_server(database) as url:
            yield {"folder": folder, "database": database, "url": url, "proc": proc}
    finally:
        if proc.poll() is None:
            proc.wait(timeout=300)


def _has_tournament(database: Path) -> bool:
    if not database.exists():
        return False
    try:
        with closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True)) as db:
            return db.execute("SELECT COUNT(*) FROM tournaments").fetchone()[0] > 0
    except sqlite3.Error:
        return False


def _overall(page: Any) -> dict[str, int]:
    """bot -> matches in the overall standings table on the page."""
    return page.evaluate("""() => Object.fromEntries(
        [...document.querySelectorAll('table.standings[data-title="overall"] tbody tr')]
        .map(tr => [tr.dataset.bot, Number(tr.children[2].textContent)]))""")


def test_the_tournament_page_updates_its_standings_while_the_tournament_runs(
    browser: Any, contest: dict[str, Any]
) -> None:
    """Opened while the tournament plays, the tournament page shows the progress and the
    standings so far, then — with no reload — the progress and the overall standings change
    as matches are stored, up to every match of the round robin."""
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    page.goto(f"{contest['url']}/t/{NAME}")
    page.evaluate("() => { window.__no_reload = true; }")
    first_done = int(page.get_attribute("#live .progress", "data-done") or "0")
    assert first_done < 4, "the tournament ended before the page opened: make it slower"
    before = _overall(page)
    page.wait_for_function(
        "n => Number(document.querySelector('#live .progress').dataset.done) > n",
        arg=first_done, timeout=180_000)
    during = _overall(page)
    assert sum(during.values()) > sum(before.values())
    page.wait_for_function(
        "() => document.querySelector('#live .progress').dataset.done === '4'",
        timeout=180_000)
    assert page.evaluate("() => window.__no_reload") is True
    assert _overall(page) == {"ponder": 4, "heuristic": 4}
    assert "4/4 matches" in (page.text_content("#live") or "")
    if SHOTS:
        page.wait_for_timeout(1500)  # the finished update
        page.screenshot(path=f"{SHOTS}/web-tournament.png")
    page.close()


def _table_cards(page: Any, deck: str) -> tuple[set[str], set[str]]:
    """The card faces drawn in the viewer (data-card) and every card named in its text."""
    faces = set(page.evaluate(
        "() => [...document.querySelectorAll('#viewer [data-card]')].map(e => e.dataset.card)"))
    return faces, card_tokens(page.inner_text("#viewer"), deck) | faces


def test_replay_viewer_steps_through_a_hand_showing_each_seat_only_what_it_knew(
    browser: Any, contest: dict[str, Any]
) -> None:
    """In the replay of a 2v2 match, for two seats: Home, then → through the whole first hand;
    at every step the cards in the page (drawn faces and card names in the text) are only
    those the engine's view of that seat held or its events told it, and the seat's own
    hand is drawn. End jumps to the last step, a deep link (#d=5&seat=2) opens that step and
    seat, and the all-cards view draws every hand."""
    assert contest["proc"].wait(timeout=300) == 0
    with closing(sqlite3.connect(contest["database"])) as db:
        match_id, replay = db.execute(
            "SELECT id, replay FROM matches WHERE variant = 'argentine-2v2' ORDER BY id"
        ).fetchone()
    url = f"{contest['url']}/m/{quote(match_id, safe='')}"
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    page.goto(url)
    page.wait_for_selector("#viewer[data-step]")
    for seat in (1, 2):
        oracle = engine_steps(Path(replay), seat)
        page.select_option("#seat", str(seat))
        page.wait_for_selector(f'.seat.mine[data-seat="{seat}"]')
        page.keyboard.press("Home")
        hand = (oracle[0].game, oracle[0].hand)
        step = 0
        while True:
            assert page.get_attribute("#viewer", "data-step") == str(step)
            faces, named = _table_cards(page, "spanish")
            known = oracle[step]
            assert named <= known.allowed, (seat, step, named - known.allowed)
            assert known.own <= faces, (seat, step)
            if (known.game, known.hand) != hand:
                break  # the first deal of the next hand: the whole hand was walked
            page.keyboard.press("ArrowRight")
            step += 1
        assert step >= 4
    page.keyboard.press("End")
    steps = len(engine_steps(Path(replay), None))
    assert page.get_attribute("#viewer", "data-step") == str(steps - 1)
    if SHOTS:
        page.goto(url + "#d=9&seat=0")
        page.reload()
        page.wait_for_selector('.seat.mine[data-seat="0"]')
        page.screenshot(path=f"{SHOTS}/web-replay.png")
    page.goto(url + "#d=5&seat=2")
    page.reload()
    page.wait_for_selector('.seat.mine[data-seat="2"]')
    assert page.get_attribute("#viewer", "data-step") == "5"
    assert page.input_value("#seat") == "2"
    page.select_option("#seat", "all")
    page.wait_for_function("() => !document.querySelector('.seat.mine')")
    page.keyboard.press("Home")
    every = page.evaluate(
        "() => [...document.querySelectorAll('.seat .hand [data-card]')].length")
    assert every == 12  # four hands of three
    page.close()


def test_the_report_opens_offline_and_plays_an_embedded_replay(
    browser: Any, contest: dict[str, Any]
) -> None:
    """The report file, opened from disk with every network request refused, draws the
    standings and, from a match link, the embedded replay, which → steps through."""
    assert contest["proc"].wait(timeout=300) == 0
    out = contest["folder"] / "report.html"
    run = arena("report", NAME, "--database", contest["database"], "-o", out,
                cwd=contest["folder"])
    assert run.returncode == 0, run.stderr
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    requests: list[str] = []
    page.route("**/*", lambda route: (requests.append(route.request.url),
                                      route.continue_() if route.request.url.startswith("file:")
                                      else route.abort()))
    page.goto(out.as_uri())
    assert page.locator('table.standings[data-title="overall"] tbody tr').count() == 2
    page.click("ul.replays a >> nth=0")
    page.wait_for_selector("#viewer[data-step]")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    assert page.get_attribute("#viewer", "data-step") == "2"
    assert page.locator("#viewer [data-card]").count() > 0
    assert all(u.startswith("file:") for u in requests), requests
    if SHOTS:
        page.goto(out.as_uri())
        page.screenshot(path=f"{SHOTS}/web-report.png")
    page.close()


def test_matches_page_renders(contest: dict[str, Any]) -> None:
    """The matches list of the live tournament links every stored match (plain HTTP)."""
    assert contest["proc"].wait(timeout=300) == 0
    status, html = get(f"{contest['url']}/matches?tournament={NAME}")
    assert status == 200
    assert html.count('<a href="/m/') == 4


def test_a_running_match_can_be_watched_live_with_public_information_only(
    browser: Any, tmp_path: Path
) -> None:
    """With `arena tournament --web 0`, the live page lists the match being played; its
    viewer follows the match as it goes (the public state changes without a reload) and
    never draws a card face in any seat's hand: every hand is backs only."""
    # A calm ponderer (tests/bots/pondering.py): the match lasts at least 137 of its
    # decisions in 400 simulated deals (3 with a random one), so it is still on when the
    # viewer has been watched for a while.
    bots = {"ponder": python_bot(TEST_BOTS / "pondering.py", "40", "calm"),
            "heuristic": python_bot(HEURISTIC_BOT)}
    config = write_config(tmp_path, "watched", bots=bots, variants=("argentine-2v2",),
                          games=1, concurrency=1)
    with tournament_with_web(tmp_path, config, "watched") as (proc, url, _log):
        _watch_live(browser, proc, url)


def _watch_live(browser: Any, proc: subprocess.Popen[bytes], url: str) -> None:
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    try:
        page.goto(f"{url}/live")
        while page.locator("ul.live a").count() == 0:
            assert proc.poll() is None, "the match ended before it was listed"
            page.wait_for_timeout(200)
            page.reload()
        page.click("ul.live a >> nth=0")
        page.wait_for_selector("#viewer[data-step]")
        page.evaluate("() => { window.__no_reload = true; }")
        first = page.get_attribute("#viewer", "data-step")
        page.wait_for_function(
            "s => document.querySelector('#viewer').dataset.step !== s", arg=first,
            timeout=120_000)
        assert page.evaluate("() => window.__no_reload") is True
        for _ in range(5):
            assert page.locator(".seat .hand [data-card]").count() == 0
            assert page.locator(".seat .hand .back").count() > 0
            page.wait_for_timeout(300)
        if SHOTS:
            page.screenshot(path=f"{SHOTS}/web-live.png")
    finally:
        page.close()

"""`arena web` and `arena report` from the outside, without a browser.

A real short tournament (real referee, real bot processes, a real SQLite file and replays) is
played once; `arena web` then serves it as a separate process on a real port, and a plain
HTTP client (urllib: no SDK, no app object) checks every route, the errors, the live feed and
— the point of the replay viewer — that a seat's replay never holds a card that the engine's
view of that seat did not.
"""

from __future__ import annotations

import http.client
import json
import re
import shutil
import socket
import sqlite3
import time
import urllib.request
from contextlib import closing
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import trio
from test_e2e_support import TEST_BOTS, arena, explain, python_bot, tournament_with_web
from web_support import (
    BOTS,
    VARIANTS,
    card_tokens,
    engine_steps,
    get,
    get_json,
    play,
    web_server,
    write_config,
)

from arena.replay import load_replay
from arena.web import replaydata

pytestmark = pytest.mark.e2e
NAME = "webcup"


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished tournament: 2 bots x 3 variants x 2 games (both sides of each seed)."""
    return play(tmp_path_factory.mktemp("web"), NAME, games=2, concurrency=2)


@pytest.fixture(scope="module")
def base(played: Path) -> Any:
    with web_server(played) as url:
        yield url


def _rows(database: Path) -> list[dict[str, Any]]:
    with closing(sqlite3.connect(database)) as db:
        db.row_factory = sqlite3.Row
        return [dict(r) for r in db.execute("SELECT * FROM matches ORDER BY id")]


def _bots_in_table(html: str, title: str) -> dict[str, int]:
    """bot -> matches, from the standings table titled `title`."""
    table = re.search(rf'<table class="standings" data-title="{re.escape(title)}">(.*?)</table>',
                      html, re.S)
    assert table, f"no standings table {title!r}"
    return {m.group(1): int(m.group(2)) for m in re.finditer(
        r'<tr data-bot="([^"]+)"><td>\d+</td><td>.*?</td><td>(\d+)</td>', table.group(1))}


def test_every_page_and_api_route_answers_with_its_content(base: str, played: Path) -> None:
    """Every route of `arena web` answers 200 with what it is for: the tournaments list, the
    tournament's standings per variant and overall (each bot's match count as stored, an Elo
    interval drawn as SVG, a crosstable), the ladder, the matches list, a match's viewer page,
    the JSON snapshot and the static JS/CSS."""
    rows = _rows(played)
    status, index = get(base + "/")
    assert status == 200
    assert f'href="/t/{NAME}"' in index
    assert f"{len(rows)}/{len(rows)}" in index
    status, page = get(f"{base}/t/{NAME}")
    assert status == 200
    for variant in VARIANTS:
        counts = _bots_in_table(page, variant)
        stored = {b: sum(1 for r in rows if r["variant"] == variant and b in (r["bot0"], r["bot1"]))
                  for b in BOTS}
        assert counts == stored
    assert _bots_in_table(page, "overall") == {b: len(rows) for b in BOTS}
    assert page.count('<svg class="elo"') >= 2 * (len(VARIANTS) + 1)
    assert '<table class="cross">' in page
    assert 'data-events="/api/t/' in page
    assert "latency p50 ms" in page
    status, ladder = get(base + "/ladder")
    assert status == 200
    assert _bots_in_table(ladder, "overall") == {b: len(rows) for b in BOTS}
    status, snap = get_json(f"{base}/api/t/{NAME}")
    assert status == 200
    assert snap["done"] == snap["total"] == len(rows)
    assert snap["finished"]
    status, listing = get(f"{base}/matches?tournament={NAME}")
    assert status == 200
    assert all(f'/m/{quote(r["id"], safe="")}"' in listing for r in rows)
    status, viewer = get(f"{base}/m/{quote(rows[0]['id'], safe='')}")
    assert status == 200
    assert 'id="viewer"' in viewer
    assert "/static/replay.js" in viewer
    for name in ("replay.js", "cards.js", "live.js", "app.css"):
        status, body = get(f"{base}/static/{name}")
        assert status == 200
        assert len(body) > 100


@pytest.mark.parametrize("field", ["bot", "variant", "termination"])
def test_the_matches_list_filters(base: str, played: Path, field: str) -> None:
    """Filtering the matches list by bot, variant or termination lists exactly the stored
    matches that fit (and, for a value no match has, none)."""
    rows = _rows(played)
    value = {"bot": "heuristic", "variant": "mineiro-2v2", "termination": "normal"}[field]
    fits = {r["id"] for r in rows if (value in (r["bot0"], r["bot1"]) if field == "bot"
                                      else r[field] == value)}
    assert fits
    status, html = get(f"{base}/matches?{field}={value}")
    assert status == 200
    listed = set(re.findall(r'<a href="/m/[^"]+">([^<]+)</a>', html))
    assert listed == fits
    other = "nobody" if field == "bot" else ("argentine-4v4" if field == "variant" else "timeout")
    assert not re.findall(r'<a href="/m/', get(f"{base}/matches?{field}={other}")[1])


def test_bad_requests_get_one_line_errors_naming_the_field(base: str, played: Path) -> None:
    """An unknown tournament or match is a 404, a bad seat or termination a 400; each error
    names what was wrong."""
    match_id = quote(_rows(played)[0]["id"], safe="")
    cases = [
        ("/t/nope", 404, "tournament: no tournament named 'nope'"),
        ("/api/t/nope", 404, "tournament: no tournament named 'nope'"),
        ("/m/nope", 404, "match: no match with id 'nope'"),
        (f"/api/m/{match_id}/replay?seat=x", 400, "seat: must be a seat number or 'all'"),
        (f"/api/m/{match_id}/replay?seat=7", 400, "seat: 7 is not a seat of this match"),
        ("/matches?termination=won", 400, "termination: must be one of"),
    ]
    for path, code, text in cases:
        status, body = get(base + path)
        assert status == code, (path, status, body)
        assert text in body.replace("&#x27;", "'"), (path, body)


def test_a_seats_replay_holds_no_card_the_engines_view_of_that_seat_did_not(
    base: str, played: Path
) -> None:
    """For every match and every seat, every card anywhere in the JSON the viewer is sent for
    that seat (its table, its events, the texts) is one the engine's `Match.view(seat)` held
    at that step or an event of that decision told the seat — and the seat's own hand is
    exactly the view's. The all-cards view of a finished match shows every hand."""
    for row in _rows(played):
        path = Path(row["replay"])
        seats = len(json.loads(row["seat_bots"]))
        url = f"{base}/api/m/{quote(row['id'], safe='')}/replay"
        for seat in range(seats):
            status, data = get_json(f"{url}?seat={seat}")
            assert status == 200
            deck = data["header"]["deck"]
            oracle = engine_steps(path, seat)
            assert len(data["steps"]) == len(oracle)
            for step, known in zip(data["steps"], oracle, strict=True):
                sent = card_tokens(json.dumps(step), deck)
                assert sent <= known.allowed, (row["id"], seat, step["step"],
                                               sent - known.allowed)
                assert set(step["state"]["hand"]) == known.own
                hands = step["state"]["hands"]
                assert all(h is None for s, h in enumerate(hands) if s != seat)
        status, everything = get_json(f"{url}?seat=all")
        assert status == 200
        first = everything["steps"][0]["state"]["hands"]
        assert all(len(h) >= 3 for h in first[:seats])


def test_the_all_cards_view_is_refused_for_a_match_that_did_not_end(played: Path) -> None:
    """A replay without its result line (a match still being played, or cut off) has no
    all-cards view; a seat's view of it is still there."""
    row = _rows(played)[0]
    rec = replaydata.recorded(load_replay(Path(row["replay"])))
    unfinished = replaydata.Recorded(**{**{f: getattr(rec, f) for f in rec.__slots__},
                                        "result": None})
    with pytest.raises(PermissionError, match="only for a finished match"):
        replaydata.steps(unfinished, None)
    assert replaydata.steps(unfinished, 0)[0]["state"]["hand"]


def test_the_live_feed_sends_new_standings_when_a_match_row_appears(
    played: Path, tmp_path: Path
) -> None:
    """The server-sent events of a tournament send a first update, then a new one when a
    match row is committed to the database by another process (here: another sqlite
    connection), with the new count and standings."""
    database = tmp_path / "live.db"
    shutil.copy(played, database)
    rows = _rows(database)
    last = rows[-1]
    with closing(sqlite3.connect(database)) as db, db:
        db.execute("DELETE FROM matches WHERE id = ?", (last["id"],))
        db.execute("UPDATE tournaments SET finished_at = NULL")
    with web_server(database) as url, urllib.request.urlopen(
        f"{url}/api/t/{NAME}/events", timeout=60
    ) as feed:
        assert feed.headers["Content-Type"].startswith("text/event-stream")

        def next_update() -> dict[str, Any]:
            for raw in feed:
                line = raw.decode().strip()
                if line.startswith("data: "):
                    return json.loads(line[6:])  # type: ignore[no-any-return]
            raise AssertionError("the feed ended")

        first = next_update()
        assert first["done"] == len(rows) - 1
        assert not first["finished"]
        assert first["eta_s"] is not None
        with closing(sqlite3.connect(database)) as db, db:
            columns = ", ".join(last)
            db.execute(f"INSERT INTO matches({columns}) VALUES ({', '.join('?' * len(last))})",
                       tuple(last.values()))
        second = next_update()
        assert second["done"] == len(rows)
        total = sum(line["matches"] for line in second["standings"]["overall"])
        assert total == 2 * len(rows) == sum(
            line["matches"] for line in first["standings"]["overall"]) + 2


def test_report_is_one_self_contained_file(played: Path, tmp_path: Path) -> None:
    """`arena report NAME -o FILE` writes one HTML file that loads nothing from elsewhere
    (no src or href to another file, no fetch) and holds the standings of every variant, the
    rating chart, per-bot latency, and the embedded replays with their steps. The command
    says so in one line with the file's size in bytes, and nothing on stderr (it printed a
    JSON log line there, with the size in characters)."""
    out = tmp_path / "out" / "report.html"
    run = arena("report", NAME, "--database", played, "-o", out, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stderr == ""
    assert run.stdout == f"report: {out} ({out.stat().st_size:,} bytes)\n"
    html = out.read_text(encoding="utf-8")
    assert not re.search(r'\b(?:src|href)="(?!#|data:)', html)
    assert "fetch(" in html  # the viewer's web path is there...
    assert '<script type="application/json" id="arena-replays">' in html  # ...but unused
    for variant in VARIANTS:
        assert f'data-title="{variant}"' in html
    assert '<svg class="chart"' in html
    assert "latency p99 ms" in html
    blob = re.search(r'id="arena-replays">(.*?)</script>', html, re.S)
    assert blob
    embedded = json.loads(blob.group(1))
    rows = _rows(played)
    assert set(embedded) == {r["id"] for r in rows}
    for match_id, data in embedded.items():
        row = next(r for r in rows if r["id"] == match_id)
        assert len(data["steps"]) == row["decisions"] + 1


def test_cli_refuses_bad_arguments_with_one_line(played: Path, tmp_path: Path) -> None:
    """`arena web` with a malformed --listen or a missing database, and `arena report` for an
    unknown tournament, exit 2 with one line naming what was wrong."""
    bad = arena("web", "--database", played, "--listen", "localhost", cwd=tmp_path)
    assert bad.returncode == 2
    assert "--listen: expected HOST:PORT" in bad.stderr
    missing = arena("web", "--database", tmp_path / "none.db", cwd=tmp_path)
    assert missing.returncode == 2
    assert "--database:" in missing.stderr
    unknown = arena("report", "nope", "--database", played, cwd=tmp_path)
    assert unknown.returncode == 2
    assert "tournament: no tournament named 'nope'" in unknown.stderr
    assert f"tournaments there: {NAME}" in unknown.stderr


def test_tournament_with_web_serves_the_pages_while_it_plays(tmp_path: Path) -> None:
    """`arena tournament --web 0` serves the same pages in-process while it plays: the
    tournament's JSON answers (with the round robin's total) before the run ends, /live lists
    the match being played and its feed sends public states only (no hand, no legal
    actions), in order; the run still ends normally. A malformed --web or
    [spectators] delay_s is refused naming the option."""
    # A calm ponderer: every hand costs it a decision (80 ms) and is worth at most 2 points,
    # so each match outlasts the spectators' delay (0.5 s) by 0.14 s at the very least and
    # by seconds in practice (with a random ponderer, a fresh-clone run once ended before
    # /live listed any match).
    bots = {"ponder": python_bot(TEST_BOTS / "pondering.py", "80", "calm"),
            "random": BOTS["random"]}
    config = write_config(tmp_path, "inproc", bots=bots, variants=("argentine-1v1",), games=2,
                          concurrency=1, extra="\n[spectators]\ndelay_s = 0.5\n")
    with tournament_with_web(tmp_path, config, "inproc") as (proc, url, _log):
        status, snap = get_json(f"{url}/api/t/inproc")
        assert proc.poll() is None, "the tournament ended before the page was read"
        assert status == 200
        assert snap["total"] == 2
        assert not snap["finished"]
        while not (live := re.search(r'href="/live/([^"]+)"', get(f"{url}/live")[1])):
            assert proc.poll() is None, "no match was ever listed as live"
            time.sleep(0.1)
        with urllib.request.urlopen(f"{url}/api/live/{live.group(1)}/events",
                                    timeout=60) as feed:
            states = []
            for raw in feed:
                line = raw.decode().strip()
                if line.startswith("data: "):
                    states.append(json.loads(line[6:]))
                    if len(states) == 3:
                        break
        assert {tuple(s["header"]["bots"]) for s in states} in (
            {("ponder", "random")}, {("random", "ponder")})
        for state in states:
            assert state["state"]["hands"] == [None, None]
            assert state["state"]["hand"] == []
            assert state["state"]["legal"] == []
        assert [s["step"] for s in states] == sorted({s["step"] for s in states})
    bad = arena("tournament", config, "--web", "nowhere", cwd=tmp_path)
    assert bad.returncode == 2
    assert "--web: expected HOST:PORT" in bad.stderr
    config.write_text(config.read_text().replace("delay_s = 0.5", "delay_s = -1"))
    bad = arena("tournament", config, cwd=tmp_path)
    assert bad.returncode == 2
    assert "spectators.delay_s: must be a number of seconds 0..3600, got -1" in bad.stderr


def test_a_tournament_not_on_a_terminal_logs_a_line_per_match_with_an_eta(played: Path) -> None:
    """Not on a terminal, `arena tournament` prints one line per finished match on stderr:
    its count, its id, how it ended, the bot that won it (as stored), the score with each
    bot's name beside its points (as stored: the order alternates between a pair's matches,
    so a bare "22-61" was read the wrong way round) and an ETA; the last one's ETA is 0 s."""
    lines = [ln for ln in (played.parent / "tournament.err").read_text().splitlines()
             if re.match(r"\[\d+/\d+\] ", ln)]
    rows = {r["id"]: r for r in _rows(played)}
    assert len(lines) == len(rows)
    for n, line in enumerate(lines, 1):
        m = re.fullmatch(
            r"\[(\d+)/(\d+)\] (\S+): (\w+), won by (\S+), (\S+) (\d+)-(\d+) (\S+); ETA (\d+) s",
            line)
        assert m, line
        assert (int(m.group(1)), int(m.group(2))) == (n, len(rows))
        row = rows[m.group(3)]
        assert m.group(4) == row["termination"]
        winner = {0: row["bot0"], 1: row["bot1"]}.get(row["winner_bot"], "nobody")
        assert m.group(5) == winner
        assert (m.group(6), m.group(9)) == (row["bot0"], row["bot1"])
        assert (int(m.group(7)), int(m.group(8))) == (row["points0"], row["points1"])
    assert lines[-1].endswith("ETA 0 s")


def _unfinished_copy(played: Path, tmp_path: Path) -> Path:
    """`played` with its tournament marked as still running: its event stream stays open."""
    database = tmp_path / "running.db"
    shutil.copy(played, database)
    with closing(sqlite3.connect(database)) as db, db:
        db.execute("UPDATE tournaments SET finished_at = NULL")
    return database


def _open_stream(base: str, path: str, source: str = "127.0.0.1") -> tuple[socket.socket, int]:
    """A raw HTTP/1.1 GET of `path` from the local address `source` (any 127.x.y.z is this
    machine): the socket, still open, and the status code."""
    sock, status, _ = _request(base, path, source)
    return sock, status


def _refusal(base: str, path: str, source: str = "127.0.0.1") -> tuple[int, str]:
    """The status and whole response of a GET the server refuses (and then closes)."""
    sock, status, text = _request(base, path, source)
    with sock:
        while b"}" not in text:  # the JSON reason
            chunk = sock.recv(4096)
            if not chunk:
                break
            text += chunk
    return status, text.decode(errors="replace")


def _request(base: str, path: str, source: str,
             forwarded: str | None = None) -> tuple[socket.socket, int, bytes]:
    host, port = base.removeprefix("http://").rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=30, source_address=(source, 0))
    extra = f"X-Forwarded-For: {forwarded}\r\n" if forwarded is not None else ""
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n{extra}"
                 "\r\n".encode())
    head = b""
    while b"\r\n" not in head:
        chunk = sock.recv(4096)
        if not chunk:
            break
        head += chunk
    return sock, int(head.split(b" ", 2)[1]), head


def test_a_visitor_holds_a_bounded_number_of_event_streams(played: Path, tmp_path: Path) -> None:
    """A hostile review (round 4) held 300 idle event streams of a running tournament open
    from one client, at no cost to itself; the process serving them (the referee, with
    `--web`) spent 35 s of CPU on them and honest bots lost by timeout. Now, from a raw HTTP
    client: one client (one host) holds at most 8 streams (the 9th is refused at once with
    429 and a one-line JSON reason), the server at most 64 in all (every further client,
    here other 127.x addresses, gets 503), and a closed stream frees its place."""
    with web_server(_unfinished_copy(played, tmp_path)) as base:
        path = f"/api/t/{NAME}/events"
        held = []
        try:
            for _ in range(8):
                sock, status = _open_stream(base, path)
                held.append(sock)
                assert status == 200, status
            status, body = _refusal(base, path)
            assert status == 429, status
            assert "at most 8 open from one client" in body, body
            for n in range(2, 9):  # 7 more hosts x 8: 64 in all
                for _ in range(8):
                    sock, status = _open_stream(base, path, f"127.0.0.{n}")
                    held.append(sock)
                    assert status == 200, (n, status)
            status, body = _refusal(base, path, "127.0.0.9")
            assert status == 503, status
            assert "at most 64 open on this server" in body, body
            held.pop().close()  # one of 127.0.0.8's: a place for someone else again
            for _ in range(100):
                sock, status = _open_stream(base, path, "127.0.0.9")
                if status == 200:
                    break
                sock.close()
                time.sleep(0.1)
            assert status == 200, status
            held.append(sock)
        finally:
            for sock in held:
                sock.close()


def test_behind_a_trusted_proxy_each_forwarded_client_has_its_own_bounds(
    played: Path, tmp_path: Path,
) -> None:
    """`arena web --trusted-proxy 127.0.0.1`: requests from that host (the proxy) are held to
    the bounds of the client X-Forwarded-For names, its rightmost entry (a proxy appends the
    address it saw: what the visitor wrote to its left is not believed). Client A behind the
    proxy fills its 8 event streams and is refused the 9th, B behind the same proxy still
    gets one, and A cannot pass itself off as B by writing B first. A host that is not a
    trusted proxy (127.0.0.2) is itself whatever it writes in the header. Without the
    option, every visitor behind a proxy shared one client's bounds (the test above)."""
    proxy, a, b = "127.0.0.1", "203.0.113.7", "198.51.100.9"
    with web_server(_unfinished_copy(played, tmp_path), "--trusted-proxy", proxy) as base:
        path = f"/api/t/{NAME}/events"
        held = []

        def open_as(source: str, forwarded: str | None) -> int:
            sock, status, _ = _request(base, path, source, forwarded)
            if status == 200:
                held.append(sock)
            else:
                sock.close()
            return status

        try:
            for _ in range(8):
                assert open_as(proxy, a) == 200
            assert open_as(proxy, a) == 429
            assert open_as(proxy, f"{b}, {a}") == 429  # B, then the proxy saw A: A
            assert open_as(proxy, f"{a}, {b}") == 200  # the proxy saw B
            for _ in range(8):  # the untrusted host, whatever it claims
                assert open_as("127.0.0.2", f"{b}, 192.0.2.{len(held)}") == 200
            assert open_as("127.0.0.2", "192.0.2.200") == 429
            assert open_as(proxy, "not an address") == 200  # counts as the proxy itself
        finally:
            for sock in held:
                sock.close()
    bad = arena("web", "--database", played, "--trusted-proxy", "my-proxy", cwd=tmp_path)
    assert bad.returncode == 2, explain(bad)
    assert "--trusted-proxy: 'my-proxy' is not an IP address or network" in bad.stderr, bad.stderr


def test_a_visitor_asking_too_fast_is_told_to_slow_down(played: Path, tmp_path: Path) -> None:
    """Requests of one client beyond a burst of 100 at 20 a second are answered at once with
    429 (a `Retry-After` and a one-line reason), without the page's work; another client is
    served meanwhile."""
    with web_server(played) as base:
        statuses: list[int] = []
        refused = ""
        began = time.monotonic()
        for _ in range(400):
            status, text = _refusal(base, f"/api/t/{NAME}")
            statuses.append(status)
            if status == 429:
                refused = text
                break
        elapsed = time.monotonic() - began
        assert statuses[0] == 200
        assert refused, statuses
        assert "retry-after: 1" in refused.lower(), refused
        assert "at most 20 a second from one client" in refused, refused
        # the burst, and what refilled while the loop ran
        assert 100 <= statuses.count(200) <= 100 + 20 * elapsed + 1, (statuses, elapsed)
        sock, status = _open_stream(base, f"/api/t/{NAME}", "127.0.0.2")
        sock.close()
        assert status == 200, status


def test_every_stream_of_a_tournament_shares_one_snapshot_a_poll() -> None:
    """`_Latest`: 40 event streams asking for a tournament's snapshot at once cause one
    computation (in a worker thread), shared while it is younger than max_age; then one
    more (a hostile review held 300 streams and each cost a snapshot a second)."""
    from arena.web.app import _Latest

    calls = []

    def compute(name: str) -> dict[str, Any]:
        calls.append(name)
        time.sleep(0.05)  # a database read
        return {"name": name, "n": len(calls)}

    latest = _Latest(compute, max_age=0.5)
    got: list[dict[str, Any]] = []

    async def main() -> None:
        async def one() -> None:
            got.append(await latest.get("cup"))

        async with trio.open_nursery() as nursery:
            for _ in range(40):
                nursery.start_soon(one)
        assert calls == ["cup"]
        await trio.sleep(0.6)
        got.append(await latest.get("cup"))

    trio.run(main)
    assert calls == ["cup", "cup"]
    assert [g["n"] for g in got] == [1] * 40 + [2]


def test_text_a_bot_wrote_cannot_end_the_reports_script_element() -> None:
    """The report embeds its replays as JSON inside a <script> element. A bot's text there
    (a hostile review, round 4: `<!--<script>` in a replay) put HTML's script parser in its
    "double-escaped" state, which swallowed the closing tag and left the page blank. The
    embedded JSON now holds no <, > or & at all, and still reads back the same."""
    from arena.report import _json_for_script

    data = {"detail": "<!--<script>alert(1)</script>--> & </SCRIPT >", "n": [1, "<"]}
    text = _json_for_script(data)
    assert not set("<>&") & set(text), text
    assert json.loads(text) == data


def test_replays_are_found_from_any_folder_and_a_missing_one_is_said(tmp_path: Path) -> None:
    """A tournament run as `arena tournament cup/cup.toml` (a relative path, from the folder
    above the config's) stores where its replays are so that `arena report` and `arena web`
    run from another folder find them (a hostile review, round 4: every replay "missing", the
    report silently empty); a replay deleted since is one warning line of the report."""
    (tmp_path / "cup").mkdir()
    write_config(tmp_path / "cup", "cup", variants=("argentine-1v1",), games=1)
    run = arena("tournament", "cup/cup.toml", "--no-progress", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    database = (tmp_path / "cup" / "arena.db").resolve()
    rows = _rows(database)
    assert rows
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    report = arena("report", "cup", "--database", database, "-o", "r.html", cwd=elsewhere)
    assert report.returncode == 0, report.stderr
    assert report.stderr == ""
    blob = re.search(r'id="arena-replays">(.*?)</script>',
                     (elsewhere / "r.html").read_text(encoding="utf-8"), re.S)
    assert blob
    assert set(json.loads(blob.group(1))) == {r["id"] for r in rows}
    with web_server(database) as base:
        status, replay = get_json(f"{base}/api/m/{quote(rows[0]['id'], safe='')}/replay")
        assert status == 200, replay
    Path(rows[0]["replay"]).unlink()
    report = arena("report", "cup", "--database", database, "-o", "r.html", cwd=elsewhere)
    assert report.returncode == 0, report.stderr
    assert report.stderr.startswith("warning: 1 replay files could not be read"), report.stderr


def test_replays_wait_for_the_end_of_their_tournament(played: Path, tmp_path: Path) -> None:
    """While a tournament is being played, a match's replay (all cards, or a seat's) is
    refused with 403 and a one-line reason: bots' authors would study their opponents'
    hidden cards (a note of hostile review round 4: `--web` published them the moment each
    match was stored). `arena web --replays-while-playing` serves them at once; so does a
    ladder, which never ends; and a finished tournament's are served as before."""
    database = _unfinished_copy(played, tmp_path)
    match_id = quote(_rows(database)[0]["id"], safe="")
    with web_server(database) as base:
        for seat in ("all", "0"):
            status, body = get_json(f"{base}/api/m/{match_id}/replay?seat={seat}")
            assert status == 403, body
            assert body["error"].startswith(f"replay: shown once tournament '{NAME}' is over")
    with web_server(database, "--replays-while-playing") as base:
        status, body = get_json(f"{base}/api/m/{match_id}/replay?seat=all")
        assert status == 200, body
    with closing(sqlite3.connect(database)) as db, db:
        db.execute("UPDATE tournaments SET config = ?", (json.dumps({"ladder": True}),))
    with web_server(database) as base:
        status, body = get_json(f"{base}/api/m/{match_id}/replay?seat=all")
        assert status == 200, body
    with web_server(played) as base:
        status, body = get_json(f"{base}/api/m/{match_id}/replay?seat=all")
        assert status == 200, body


def test_a_report_of_a_tournament_being_played_embeds_no_replay(
    played: Path, tmp_path: Path
) -> None:
    """`arena report` of a tournament still being played embeds no replay (each shows every
    seat's hidden cards; an outside walkthrough found twelve embedded mid-tournament while
    the web refused the same ones) and says so on stderr; `--replays-while-playing` embeds
    them, as `arena web --replays-while-playing` serves them."""
    database = _unfinished_copy(played, tmp_path)

    def embedded(*flags: str) -> tuple[dict[str, Any], str]:
        out = tmp_path / "report.html"
        run = arena("report", NAME, "--database", database, "-o", out, *flags, cwd=tmp_path)
        assert run.returncode == 0, run.stderr
        blob = re.search(r'id="arena-replays">(.*?)</script>',
                         out.read_text(encoding="utf-8"), re.S)
        assert blob
        return json.loads(blob.group(1)), run.stderr

    held, said = embedded()
    assert held == {}
    assert "still being played: no replay embedded" in " ".join(said.split())
    shown, said = embedded("--replays-while-playing")
    assert set(shown) == {r["id"] for r in _rows(database)}
    assert said == ""


def test_client_of_believes_only_what_trusted_proxies_appended() -> None:
    """`arena.web.limits.client_of`, the rule behind --trusted-proxy, case by case: the peer
    unless it is a trusted proxy; then the rightmost X-Forwarded-For entry that is not a
    trusted proxy (ports and IPv6 brackets dropped, an IPv4-mapped address as IPv4, several
    header lines joined in order); the proxy itself when the header is missing, only names
    proxies, or holds something that is not an address."""
    from arena.web.limits import client_of, parse_proxies

    proxies = parse_proxies(["10.0.0.0/8", "::1"])

    def who(peer: str, *forwarded: str) -> str:
        headers = [(b"x-forwarded-for", value.encode("latin-1")) for value in forwarded]
        return client_of({"client": (peer, 5000), "headers": headers}, proxies)

    assert who("192.0.2.1", "198.51.100.9") == "192.0.2.1"  # not a proxy: not believed
    assert who("10.1.2.3") == "10.1.2.3"
    assert who("10.1.2.3", "198.51.100.9") == "198.51.100.9"
    assert who("10.1.2.3", "6.6.6.6, 198.51.100.9") == "198.51.100.9"
    assert who("10.1.2.3", "198.51.100.9, 10.9.9.9") == "198.51.100.9"  # two proxies
    assert who("10.1.2.3", "198.51.100.9:4711") == "198.51.100.9"
    assert who("10.1.2.3", "[2001:db8::5]:443") == "2001:db8::5"
    assert who("::1", "::ffff:198.51.100.9") == "198.51.100.9"
    assert who("10.1.2.3", "6.6.6.6", "198.51.100.9") == "198.51.100.9"  # two lines
    assert who("10.1.2.3", "10.5.5.5") == "10.1.2.3"  # only proxies
    assert who("10.1.2.3", "unknown") == "10.1.2.3"
    assert who("10.1.2.3", "198.51.100.9, <script>") == "10.1.2.3"
    assert client_of({"client": ("10.1.2.3", 1), "headers": [
        (b"x-forwarded-for", b"198.51.100.9")]}) == "10.1.2.3"  # no proxy trusted
    with pytest.raises(ValueError, match="'proxy' is not an IP address or network"):
        parse_proxies(["127.0.0.1", "proxy"])


def test_a_page_open_to_the_end_of_a_tournament_with_web_sees_it_finished(
    tmp_path: Path,
) -> None:
    """`arena tournament --web`: a page watching the tournament's event stream to its end
    gets the last match and the finished state before the server goes with the tournament
    (an outside walkthrough's page stayed on "5/6 matches, ETA 0m03s" for good: the process
    ended within the feed's poll of the last match)."""
    config = write_config(tmp_path, "tail", bots=BOTS, variants=("argentine-1v1",), games=2,
                          concurrency=1)
    snapshots: list[dict[str, Any]] = []
    with tournament_with_web(tmp_path, config, "tail") as (_proc, url, _log):
        try:
            with urllib.request.urlopen(f"{url}/api/t/tail/events", timeout=120) as feed:
                for raw in feed:
                    line = raw.decode().strip()
                    if line.startswith("data: "):
                        snapshots.append(json.loads(line[6:]))
                        if snapshots[-1].get("finished"):
                            break
        except (OSError, http.client.HTTPException):  # the server went: what came is all
            pass
    assert snapshots, "no snapshot came"
    assert snapshots[-1]["finished"], snapshots[-1]
    assert snapshots[-1]["done"] == snapshots[-1]["total"] == 2, snapshots[-1]


def test_a_ladder_service_is_shown_as_continuous_not_as_a_tournament_with_a_total(
    tmp_path: Path,
) -> None:
    """A ladder service stores its matches as a tournament flagged `ladder`, with no planned
    total: the web showed it as "254/20 matches, running" (a made-up round robin of its bots,
    and "running" long after the service stopped) and "1 matches a pair" (an outside
    walkthrough). Now: its match count, "a ladder service: continuous, no total", no ETA,
    and "pairs chosen by the ladder service"; a tournament's page is unchanged."""
    from arena.tournament.store import Store
    from arena.web import pages
    from arena.web.data import Database

    db = tmp_path / "arena.db"
    store = Store(db)
    store.begin_tournament("main", {"ladder": True, "variants": ["argentine-1v1"]})
    store.begin_tournament("cup", {"variants": ["argentine-1v1"], "games": 1, "matches": 4})
    store.close()
    data = Database(db)
    ladder, cup = data.tournament("main"), data.tournament("cup")
    assert ladder is not None
    assert cup is not None
    lp, cp = data.progress(ladder), data.progress(cup)
    assert (lp.total, lp.eta_s, lp.ladder) == (None, None, True)
    assert pages.progress_text(lp) == "0 matches (a ladder service: continuous, no total)"
    assert pages.progress_text(cp).startswith("0/4 matches")
    body = pages.tournament_body(ladder, lp, [], [], [])
    assert "pairs chosen by the ladder service as it goes" in body
    assert "a pair" not in body.replace("pairs chosen", "")
    assert "1 match a pair" in pages.tournament_body(cup, cp, [], [], [])


def test_a_ladder_services_page_shows_its_own_openskill_tables_as_arena_ladder_show(
    tmp_path: Path,
) -> None:
    """A real `arena ladder serve` run, then `arena web` on its database: the ladder's page
    shows the service's own OpenSkill tables, the same numbers `arena ladder show` prints
    (the web showed only Elo over every tournament, and an organizer saw two rankings with
    nothing linking them: an outside walkthrough), and the Ladder page says which is which
    and links to it."""
    from test_e2e_support import bot_cmd

    (tmp_path / "ladder.toml").write_text(
        '[ladder]\nname = "main"\nvariants = ["mineiro-1v1", "argentine-1v1"]\n'
        'concurrency = 2\nmin_games = 2\ndatabase = "arena.db"\nk = 2.5\npoll_ms = 200\n\n'
        '[options.argentine-1v1]\ntarget = 15\nchicos = 1\n\n'
        f'[[bot]]\nname = "first"\ncommand = {json.dumps(bot_cmd("first_legal"))}\n\n'
        f'[[bot]]\nname = "folder"\ncommand = {json.dumps(bot_cmd("folder"))}\n'
        f'version = "2"\n', encoding="utf-8")
    served = arena("ladder", "serve", tmp_path / "ladder.toml", "--duration", "4",
                   cwd=tmp_path)
    assert served.returncode == 0, explain(served)
    shown = arena("ladder", "show", "--database", tmp_path / "arena.db", "--format", "json",
                  cwd=tmp_path)
    assert shown.returncode == 0, explain(shown)
    want = {title.removeprefix("ladder main: "): t["standings"]
            for title, t in json.loads(shown.stdout).items()}
    assert list(want) == ["mineiro-1v1", "argentine-1v1", "overall"], list(want)
    with web_server(tmp_path / "arena.db") as base:
        status, page = get(base + "/t/main")
        assert status == 200, page
        status, ladder = get(base + "/ladder")
        assert status == 200, ladder
    assert "OpenSkill" in page
    assert "&mu; &minus; 2.5&sigma;" in page
    tables = re.findall(r'<table class="ladder" data-title="([^"]+)">(.*?)</table>', page, re.S)
    assert [title for title, _ in tables] == list(want)
    for title, html in tables:
        cells = [re.findall(r"<td[^>]*>(.*?)</td>", row)
                 for row in re.findall(r"<tr data-bot=[^>]*>(.*?)</tr>", html, re.S)]
        expected = [[("&ndash;" if r["rank"] is None else str(r["rank"])), r["bot"],
                     f"{r['mu']:.2f}", f"{r['sigma']:.2f}", f"{r['conservative']:.2f}",
                     str(r["games"]), str(r["won"]), str(r["lost"]), str(r["faults"]),
                     "yes" if r["retired"] else ""] for r in want[title]]
        assert cells == expected, title
    assert 'href="/t/main"' in ladder
    assert "OpenSkill" in ladder

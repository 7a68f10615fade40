"""The `arena web` application: Starlette routes over a read-only results database, served by
Hypercorn's trio worker (`serve`).

One route, one function. Page routes are plain (sync) functions — Starlette runs them in a
worker thread, so SQLite reads and replay computation never stall the event loop; the live
feed is the one async route: server-sent events, polling the database for new match rows, so
it follows a tournament running in another process as well as one in this process.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import quote

import anyio
import structlog
import trio
from hypercorn.config import Config as HypercornConfig
from hypercorn.trio import serve as hypercorn_serve
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from arena.errors import ReplayMismatchError
from arena.replay import load_replay
from arena.tournament.backend import Target, describe
from arena.tournament.standings import variant_order
from arena.web import pages, replaydata
from arena.web.data import TERMINATIONS, Database, DatabaseError, bot_stats
from arena.web.limits import ClientLimits, Network, WebLimits
from arena.web.spectate import Spectators

STATIC = Path(__file__).parent / "static"
POLL_S = 1.0  # how often the live feed looks for new match rows

log = structlog.get_logger("arena.web")


class _Latest:
    """`compute(key)` (blocking: run in a worker thread) at most once at a time per key, its
    result shared by every caller for `max_age` seconds: a tournament's feed costs one
    snapshot a poll however many pages stream it."""

    def __init__(self, compute: Callable[[str], dict[str, Any]], max_age: float) -> None:
        self.compute = compute
        self.max_age = max_age
        self._kept: dict[str, tuple[float, dict[str, Any]]] = {}
        self._locks: dict[str, anyio.Lock] = {}

    async def get(self, key: str) -> dict[str, Any]:
        kept = self._kept.get(key)
        if kept is not None and anyio.current_time() - kept[0] < self.max_age:
            return kept[1]
        lock = self._locks.setdefault(key, anyio.Lock())
        async with lock:  # the callers that came meanwhile share this one computation
            kept = self._kept.get(key)
            if kept is not None and anyio.current_time() - kept[0] < self.max_age:
                return kept[1]
            value = await anyio.to_thread.run_sync(self.compute, key)
            self._kept[key] = (anyio.current_time(), value)
            return value


@lru_cache(maxsize=64)
def _steps(path: str, mtime: float, seat: int | None) -> tuple[dict[str, Any], list[Any]]:
    rec = replaydata.recorded(load_replay(Path(path)))
    return replaydata.header(rec), replaydata.steps(rec, seat)


def create_app(
    database: Target, *, poll_s: float = POLL_S, spectators: Spectators | None = None,
    limits: WebLimits | None = None, replays_while_playing: bool = False,
    trusted_proxies: tuple[Network, ...] = (),
) -> ClientLimits:
    """The web app over `database` (read-only); with `spectators`, also the live matches of
    the tournament playing in this process; each client held to `limits`. A match's replay
    is served once its tournament is over (a ladder's at once), unless
    `replays_while_playing`: bots' authors would study their opponents' hidden cards of the
    matches played so far (README "Deals"). Behind `trusted_proxies`, a client is the one
    their ``X-Forwarded-For`` names (`arena.web.limits`)."""
    db = Database(database)

    def html(title: str, body: str, scripts: tuple[str, ...] = (), status: int = 200) -> Response:
        return HTMLResponse(pages.page(title, body, scripts=scripts), status_code=status)

    def tournament_or_404(name: str) -> Any:
        t = db.tournament(name)
        if t is None:
            raise HTTPException(404, f"tournament: no tournament named {name!r}")
        return t

    def index(request: Request) -> Response:
        ts = db.tournaments()
        return html("tournaments", pages.tournaments_list(ts, {t.name: db.progress(t) for t in ts}))

    def ladder(request: Request) -> Response:
        tables = db.tables(None)
        services = [t for t in db.tournaments() if t.ladder]
        also = "".join(
            f' · <a href="/t/{quote(t.name, safe="")}">{pages.e(t.name)}</a>' for t in services)
        note = (" (ladder services' matches included); a ladder service's own OpenSkill "
                f"ratings, as <code>arena ladder show</code> prints them, are on its page{also}"
                if services else "")
        return html("ladder", "<h1>Ladder</h1><p class=meta>Elo over every match of every "
                    f"tournament{note}</p>" + pages.section_standings(tables, link="/matches"))

    def tournament(request: Request) -> Response:
        t = tournament_or_404(request.path_params["name"])
        body = pages.tournament_body(t, db.progress(t), db.tables(t.name),
                                     db.matches(t.name, limit=10_000), bot_stats(db, t.name),
                                     db.ladder_ratings(t))
        return html(t.name, body, ("live.js",))

    def matches(request: Request) -> Response:
        q = {k: request.query_params.get(k, "") for k in
             ("tournament", "bot", "variant", "termination")}
        if q["termination"] and q["termination"] not in TERMINATIONS:
            raise HTTPException(400, f"termination: must be one of {', '.join(TERMINATIONS)}, "
                                     f"got {q['termination']!r}")
        rows = db.matches(q["tournament"] or None, bot=q["bot"] or None,
                          variant=q["variant"] or None, termination=q["termination"] or None)
        every = db.rows(q["tournament"] or None)
        bots = sorted({b for r in every for b in (r.bot0, r.bot1)})
        variants = variant_order(r.variant for r in every)
        title = f"matches of {q['tournament']}" if q["tournament"] else "matches"
        hidden = (f'<input type="hidden" name="tournament" value="{pages.e(q["tournament"])}">'
                  if q["tournament"] else "")
        form = pages.filter_form("/matches", bots, variants, q).replace("<button>",
                                                                         hidden + "<button>")
        return html(title, f"<h1>{pages.e(title)}</h1>{form}<p>{len(rows)} matches</p>"
                    + pages.matches_table(rows))

    def match_row(match_id: str) -> dict[str, Any]:
        row = db.match(match_id)
        if row is None:
            raise HTTPException(404, f"match: no match with id {match_id!r}")
        return row

    def match(request: Request) -> Response:
        row = match_row(request.path_params["id"])
        bots = json.loads(row.get("seat_bots") or "[]")
        return html(row["id"], pages.replay_body(row, bots), ("replay.js",))

    def replay_api(request: Request) -> Response:
        row = match_row(request.path_params["id"])
        held = db.tournament(row["tournament"]) if not replays_while_playing else None
        if held is not None and held.finished_at is None and not held.ladder:
            raise HTTPException(403, f"replay: shown once tournament {held.name!r} is over "
                                     "(arena web --replays-while-playing shows them at once)")
        path = db.replay_path(row)
        if path is None or not path.is_file():
            raise HTTPException(404, f"replay: the replay file of {row['id']} is missing")
        text = request.query_params.get("seat", "all")
        seat: int | None = None
        if text != "all":
            try:
                seat = int(text)
            except ValueError:
                raise HTTPException(
                    400, f"seat: must be a seat number or 'all', got {text!r}") from None
        try:
            header, steps = _steps(str(path), path.stat().st_mtime, seat)
        except PermissionError as exc:
            raise HTTPException(403, f"seat: {exc}") from None
        except ValueError as exc:  # a seat out of range
            raise HTTPException(400, str(exc)) from None
        except ReplayMismatchError as exc:
            raise HTTPException(422, f"replay: {exc}") from None
        return JSONResponse({"header": header, "seat": seat, "steps": steps})

    def snapshot(name: str) -> dict[str, Any]:
        t = tournament_or_404(name)
        p = db.progress(t)
        tables = db.tables(t.name)
        return {
            "done": p.done, "total": p.total, "eta_s": p.eta_s, "finished": p.finished,
            "progress_html": pages.progress_bar(p),
            "standings_html": pages.section_standings(tables),
            "standings": {tb.title: [{"bot": ln.bot, "matches": ln.matches, "wins": ln.wins,
                                      "elo": ln.rating.elo if ln.rating else None}
                                     for ln in tb.lines] for tb in tables},
        }

    def tournament_api(request: Request) -> Response:
        return JSONResponse(snapshot(request.path_params["name"]))

    latest = _Latest(snapshot, max_age=0.9 * poll_s)

    async def events(request: Request) -> Response:
        name = request.path_params["name"]
        first = await latest.get(name)  # 404 before streaming

        async def feed() -> AsyncIterator[str]:
            data, last = first, None
            while True:
                key = (data["done"], data["finished"])
                if key != last:
                    last = key
                    yield f"event: update\ndata: {json.dumps(data)}\n\n"
                    if data["finished"]:
                        return
                else:
                    yield ": still here\n\n"  # a comment: notices a closed connection
                await anyio.sleep(poll_s)
                data = await latest.get(name)

        return StreamingResponse(feed(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store"})

    async def live(request: Request) -> Response:
        if spectators is None:
            return html("live", "<h1>Live matches</h1><p>Live spectating is served by the "
                        "tournament itself: <code>arena tournament CONFIG --web PORT</code>.</p>")
        running = spectators.running()
        items = "".join(
            f'<li><a href="/live/{quote(h["match_id"], safe="")}">{pages.e(h["match_id"])}</a>'
            f' ({pages.e(" / ".join(h["bots"]))})</li>' for h in running)
        delay = f", shown {spectators.delay_s:g} s late" if spectators.delay_s else ""
        return html("live", f"<h1>Live matches</h1><p class=meta>public information only"
                    f"{delay}</p><ul class=live>{items or '<li>none right now</li>'}</ul>")

    async def live_match(request: Request) -> Response:
        match_id = request.path_params["id"]
        if spectators is None or spectators.state(match_id) is None:
            raise HTTPException(404, f"match: {match_id!r} is not being played here now")
        body = (f"<h1>{pages.e(match_id)}</h1><p class=meta>live, public information only</p>"
                f'<div id="viewer" data-live="/api/live/{quote(match_id, safe="")}/events">'
                '<div class="controls"><span id="pos"></span><select id="seat" hidden>'
                '<option value="all">public</option></select></div>'
                '<div id="table"></div><ol id="log"></ol></div>')
        return html(match_id, body, ("replay.js",))

    async def live_events(request: Request) -> Response:
        match_id = request.path_params["id"]
        if spectators is None or spectators.state(match_id) is None:
            raise HTTPException(404, f"match: {match_id!r} is not being played here now")
        watch = spectators

        async def feed() -> AsyncIterator[str]:
            last = -1
            watch.viewers[match_id] += 1  # the tournament's workers send its moves
            try:
                while True:
                    got = watch.event(match_id)
                    if got is None:
                        return
                    number, text, over = got
                    if number != last:
                        last = number
                        yield text
                        if over:
                            return
                    await watch.next_sample()
            finally:
                watch.viewers[match_id] -= 1
                if watch.viewers[match_id] <= 0:
                    del watch.viewers[match_id]

        return StreamingResponse(feed(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store"})

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        log.info("web_error", path=request.url.path, status=exc.status_code, detail=exc.detail)
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": exc.detail}, status_code=exc.status_code)
        return html("error", f"<h1>{exc.status_code}</h1><p class=error>{pages.e(exc.detail)}"
                    "</p>", status=exc.status_code)

    async def db_error(request: Request, exc: Exception) -> Response:
        log.warning("web_database_error", path=request.url.path, error=str(exc))
        return html("error", f"<h1>503</h1><p class=error>{pages.e(exc)}</p>", status=503)

    async def crash(request: Request, exc: Exception) -> Response:
        log.error("web_exception", path=request.url.path, error=repr(exc), exc_info=exc)
        return html("error", "<h1>500</h1><p class=error>internal error (logged)</p>",
                    status=500)

    routes = [
        Route("/", index),
        Route("/ladder", ladder),
        Route("/t/{name}", tournament),
        Route("/matches", matches),
        Route("/m/{id}", match),
        Route("/api/t/{name}", tournament_api),
        Route("/api/t/{name}/events", events),
        Route("/api/m/{id}/replay", replay_api),
        Route("/live", live),
        Route("/live/{id}", live_match),
        Route("/api/live/{id}/events", live_events),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(routes=routes, exception_handlers={
        HTTPException: http_error, DatabaseError: db_error, Exception: crash})
    return ClientLimits(app, limits or WebLimits(), trusted_proxies=trusted_proxies)


async def serve(
    database: Target, listen: str, *,
    task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
    shutdown_trigger: Callable[[], Awaitable[None]] | None = None,
    poll_s: float = POLL_S,
    spectators: Spectators | None = None,
    replays_while_playing: bool = False,
    trusted_proxies: tuple[Network, ...] = (),
) -> None:
    """Serve the app on `listen` (HOST:PORT; port 0 picks a free one) until cancelled;
    `task_status.started` gets the URL it listens on."""
    config = HypercornConfig()
    config.bind = [listen]
    config.accesslog = None
    config.errorlog = None
    app = create_app(database, poll_s=poll_s, spectators=spectators,
                     replays_while_playing=replays_while_playing,
                     trusted_proxies=trusted_proxies)

    async def started(*, task_status: trio.TaskStatus[list[str]]) -> None:
        # Starlette's ASGI types are looser than Hypercorn's (both are ASGI 3 apps).
        await hypercorn_serve(app, config,  # type: ignore[arg-type]
                              shutdown_trigger=shutdown_trigger, task_status=task_status)

    async with trio.open_nursery() as nursery:
        if spectators is not None:
            nursery.start_soon(spectators.run)
        binds: list[str] = await nursery.start(started)
        url = binds[0]
        log.info("web_listening", url=url, database=describe(database))
        task_status.started(url)

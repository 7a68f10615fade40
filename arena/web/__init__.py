"""`arena web`: a read-only view of the results database in a browser, with live updates.

Beside the layers (it imports arena.rules, arena.replay and arena.tournament's standings, and
nothing imports it): `data` reads the database (its own read-only connection), `replaydata`
turns a replay file into per-seat steps through the rules engine, `pages` renders HTML
(shared with `arena report`), `app` holds the Starlette routes and serves them with
Hypercorn's trio worker. The front end is plain JS modules in `static/` (no build step).
"""

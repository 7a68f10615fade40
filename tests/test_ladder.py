"""The ladder's parts without processes: its config, its tables in a real SQLite file, the
OpenSkill ratings with inherited priors, the pairing policy, and the gauntlet schedule."""

from __future__ import annotations

import json
import math
import random
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from arena.errors import ConfigError
from arena.tournament import parse_config, round_robin
from arena.tournament.config import BotSpec
from arena.tournament.ladder import parse_ladder_config
from arena.tournament.ladder_book import LadderBook, make_bot
from arena.tournament.ladder_ratings import SIGMA_WIDENING, line_of, rate, table_rows
from arena.tournament.pairing_policy import MODEL, Skill, choose_pair, teaching_weight
from arena.tournament.schedule import schedule_size
from arena.tournament.store import MatchRow


def _ladder(**table: Any) -> dict[str, Any]:
    return {"ladder": {"name": "main", "variants": ["mineiro-1v1"], **table},
            "bot": [{"name": "a", "command": ["python", "a.py"]},
                    {"name": "b", "version": "2", "token": "t"}]}


def test_a_ladder_config_reads_versions_and_its_settings() -> None:
    """[ladder] gives the name, variants, min_games, k, inherit; [[bot]] entries may carry a
    version (a number or a string) and a command as one shell-quoted string."""
    raw = _ladder(min_games=5, k=2.5, inherit=False, concurrency=3)
    raw["bot"].append({"name": "c", "version": 3, "command": "python 'my bot.py'"})
    config = parse_ladder_config(raw)
    assert [b.identity for b in config.bots] == ["a", "b@2", "c@3"]
    assert config.bots[2].command == ("python", "my bot.py")
    assert (config.min_games, config.k, config.inherit) == (5, 2.5, False)
    assert config.tournament.concurrency == 3
    assert config.tournament.bots == ()


@pytest.mark.parametrize(("raw", "message"), [
    (_ladder(speed=1), "ladder: unknown field 'speed'"),
    (_ladder(k=-1), "ladder.k: must be a number at least 0"),
    (_ladder(min_games="ten"), "ladder.min_games: must be a whole number"),
    ({**_ladder(), "tournament": {}}, "tournament: a ladder config has a [ladder] table"),
    ({"bot": []}, "ladder: a ladder config needs a [ladder] table"),
    ({**_ladder(), "bot": [{"name": "a", "version": "1 2", "token": "t"}]}, "bot[0].version"),
    ({**_ladder(), "bot": [{"name": "a@1", "token": "t"}]}, "bot[0].name"),
    ({**_ladder(), "bot": [{"name": "a", "token": "t"}, {"name": "a", "token": "u"}]},
     "bot[1]: 'a' is entered twice"),
    ({**_ladder(), "bot": [{"name": "a"}]}, "bot[0]: give exactly one of command"),
    # a tournament's [[bot]] rules for protocol, dir and env (config.parse_bot)
    ({**_ladder(), "bot": [{"name": "a", "command": "./a", "protocol": "lines"}]},
     "bot[0].protocol: must be one of grpc, stdio, got 'lines'"),
    ({**_ladder(), "bot": [{"name": "a", "token": "t", "protocol": "stdio"}]},
     'bot[0].protocol: "stdio" is for bots the referee launches'),
    ({**_ladder(), "bot": [{"name": "a", "command": "./a", "dir": "no-such-folder"}]},
     "bot[0].dir: folder "),
    ({**_ladder(), "bot": [{"name": "a", "command": "./a", "env": {"A=B": "1"}}]},
     "bot[0].env: variable name 'A=B' cannot contain '='"),
    ({**_ladder(), "bot": [{"name": "a", "command": "./a", "env": {"A": 1}}]},
     "bot[0].env: must be a table of strings"),
    ({**_ladder(), "bot": [{"name": "a", "token": "t", "env": {"A": "1"}}]},
     "bot[0]: dir and env are for bots with a command"),
])
def test_a_bad_ladder_config_names_the_field(raw: dict[str, Any], message: str) -> None:
    """Each mistake in a ladder config is one line naming the field."""
    with pytest.raises(ConfigError) as caught:
        parse_ladder_config(raw)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_ladder_bot_takes_a_tournaments_protocol_dir_and_env(tmp_path: Path) -> None:
    """A ladder's [[bot]] is a tournament's plus `version` (README): `protocol = "stdio"`,
    `dir` (relative to the config's folder) and `env` are read as a tournament reads them,
    and the bot's spec launches it as a tournament would, behind the stdio adapter with its
    folder and variables (an outside user's ladder refused them: "unknown field
    'protocol'")."""
    (tmp_path / "kit").mkdir()
    raw = _ladder()
    raw["bot"].append({"name": "c", "version": "1", "command": ["./bot"], "protocol": "stdio",
                       "dir": "kit", "env": {"ARENA_BOT_SEED": "7"}})
    config = parse_ladder_config(raw, base=tmp_path)
    bot = config.bots[2]
    assert (bot.protocol, bot.dir, bot.env) == ("stdio", tmp_path / "kit",
                                                (("ARENA_BOT_SEED", "7"),))
    spec = bot.spec()
    assert (spec.name, spec.protocol, spec.dir, spec.env, spec.cwd) == (
        "c@1", "stdio", tmp_path / "kit", (("ARENA_BOT_SEED", "7"),), tmp_path)
    assert spec.launch_command == ("python", "-m", "arena.stdio", "--", "./bot")
    assert config.bots[0].spec().protocol == "grpc"
    assert config.bots[0].spec().dir is None


def test_an_old_ladder_database_migrates_to_protocol_dir_and_env(tmp_path: Path) -> None:
    """A database whose ladder tables predate protocol, dir and env (ladder schema version
    1, with an entry) migrates when opened: its entry reads as a gRPC bot in its program's
    folder without variables, the schema version is the latest, and a stdio entry with a
    folder and variables is kept as entered, also after reopening."""
    from arena.tournament.backend import migrate, open_backend
    from arena.tournament.ladder_book import MIGRATIONS

    database = tmp_path / "arena.db"
    db = open_backend(database)
    migrate(db, "ladder", MIGRATIONS[:1])
    with db.transaction():
        db.execute("INSERT INTO ladder_bots(ladder, name, version, command, token, cwd, "
                   "added_at) VALUES ('main', 'old', '1', '[\"./old\"]', '', ?, 1.0)",
                   (str(tmp_path),))
    db.close()
    book = LadderBook(database)
    [old] = book.entries("main")
    assert old.bot == make_bot({"name": "old", "version": "1", "command": "./old"}, tmp_path,
                               where="bot")
    assert (old.bot.protocol, old.bot.dir, old.bot.env) == ("grpc", None, ())
    assert book.db.version("ladder") == len(MIGRATIONS)
    (tmp_path / "kit").mkdir()
    stdio = make_bot({"name": "c", "command": "./bot", "protocol": "stdio", "dir": "kit",
                      "env": {"B": "2", "A": "1"}}, tmp_path, where="bot")
    book.enter("main", stdio)
    book.close()
    book = LadderBook(database)
    assert [e.bot for e in book.entries("main")] == [old.bot, stdio]
    assert stdio.env == (("A", "1"), ("B", "2"))
    book.close()


def test_the_ladder_tables_keep_entries_retirements_and_predecessors(tmp_path: Path) -> None:
    """In a real SQLite file: entering a version twice keeps one row, retiring by name
    retires every active version, a retired version stays retired when the config enters it
    again but comes back with `arena ladder add` (revive), and each version's predecessor is
    the same name's version entered before it."""
    book = LadderBook(tmp_path / "arena.db")
    v1 = make_bot({"name": "bot", "version": "1", "command": ["python", "bot.py"]}, tmp_path,
                  where="bot")
    v2 = make_bot({"name": "bot", "version": "2", "command": "python bot.py"}, tmp_path,
                  where="bot")
    other = make_bot({"name": "other", "token": "tok"}, tmp_path, where="bot")
    for bot in (v1, v1, v2, other):
        book.enter("main", bot)
    assert [e.bot.identity for e in book.entries("main")] == ["bot@1", "bot@2", "other"]
    assert book.predecessors("main") == {"bot@2": "bot@1"}
    assert sorted(book.retire("main", "bot", None)) == ["bot@1", "bot@2"]
    assert book.retire("main", "bot", "1") == []
    book.enter("main", v1, revive=False)
    assert all(e.retired_at for e in book.entries("main") if e.bot.name == "bot")
    book.enter("main", v2)
    active = [e.bot.identity for e in book.entries("main") if e.retired_at is None]
    assert active == ["bot@2", "other"]


def _row(n: int, bot0: str, bot1: str, winner: int | None, tournament: str = "main",
         variant: str = "mineiro-1v1") -> MatchRow:
    return MatchRow(f"{tournament}:{n:07d}:{variant}:{bot0}-{bot1}:0", variant, bot0, bot1,
                    "normal", winner, None, 12, 0, (0, 0), (bot0, bot1), tournament)


def test_a_new_version_starts_from_its_predecessors_rating_with_a_wider_sigma() -> None:
    """With inheritance, a version's first rating is its predecessor's mu with sigma widened
    (in quadrature, capped at the default); without it, the default prior."""
    rows = [_row(i, "bot@1", "rival", 0) for i in range(6)]
    before = rate(rows)["bot@1"]
    assert before.mu > MODEL.mu
    lines = rate(rows, predecessors={"bot@2": "bot@1"})
    fresh = line_of(lines, "bot@2", {"bot@2": "bot@1"})
    assert fresh.mu == pytest.approx(before.mu)
    assert fresh.sigma == pytest.approx(min(math.hypot(before.sigma, SIGMA_WIDENING),
                                            MODEL.sigma))
    assert fresh.sigma > before.sigma
    plain = line_of(rate(rows), "bot@2", None)
    assert (plain.mu, plain.sigma) == (MODEL.mu, MODEL.sigma)


def test_the_ladder_table_ranks_by_the_conservative_rating_after_min_games() -> None:
    """Rows are ranked by mu - k*sigma; a bot below min_games is listed last, unranked, however
    high its rating; per-variant ratings count only that variant's matches."""
    rows = [_row(i, "strong", "weak", 0) for i in range(8)]
    rows += [_row(100, "lucky", "weak", 0, variant="argentine-1v1")]
    table = table_rows(rate(rows).values(), k=3.0, min_games=5)
    assert [(r["rank"], r["bot"]) for r in table] == [(1, "strong"), (2, "weak"),
                                                      (None, "lucky")]
    assert table[0]["conservative"] == pytest.approx(table[0]["mu"] - 3 * table[0]["sigma"],
                                                     abs=0.02)
    assert set(rate(rows, variant="argentine-1v1")) == {"lucky", "weak"}


def test_ad_hoc_matches_stay_out_of_the_ladder_unless_included(tmp_path: Path) -> None:
    """A real database holding a ladder's matches and an ad-hoc `arena match`: the ladder
    reads its own only, unless the other tournament is included by a pattern."""
    book = LadderBook(tmp_path / "arena.db")
    with closing(sqlite3.connect(tmp_path / "arena.db")) as db, db:
        for tournament in ("main", "match-1-abc"):
            db.execute("INSERT INTO tournaments(name, config, started_at) VALUES (?, '{}', 0)",
                       (tournament,))
            db.execute(
                "INSERT INTO matches(id, tournament, variant, options, seed, bot0, bot1, "
                "termination, winner_bot, points0, points1, games0, games1, strikes, "
                "decisions, started_at, finished_at, seat_bots) VALUES (?, ?, 'mineiro-1v1', "
                "'{}', 1, 'a', 'b', 'normal', 0, 12, 0, 1, 0, '[0, 0]', 10, 0, 0, ?)",
                (f"{tournament}:1", tournament, json.dumps(["a", "b"])))
    assert [r.tournament for r in book.matches("main")] == ["main"]
    assert [r.tournament for r in book.matches("main", ["match-*"])] == ["main", "match-1-abc"]


def test_the_pairing_starts_from_the_least_played_bot() -> None:
    """Each bot gets its share: the bot with fewest games is always in the next pairing, and
    its opponent is never one far beyond the field's share."""
    rng = random.Random(1)
    games = {"a": 10, "b": 10, "c": 2, "d": 30}
    for _ in range(50):
        pair = choose_pair(["a", "b", "c", "d"], {}, games, rng)
        assert pair is not None
        assert pair[0] == "c"
        assert pair[1] != "d"
    assert choose_pair(["a"], {}, {}, rng) is None


def test_the_pairing_prefers_close_and_uncertain_matches() -> None:
    """A close match teaches more than a lopsided one, an uncertain one more than a settled
    one; drawn many times, the close opponent is met far more often than the distant one."""
    assert teaching_weight(Skill(25, 3), Skill(26, 3)) > teaching_weight(Skill(25, 3),
                                                                         Skill(45, 3))
    assert teaching_weight(Skill(25, 8), Skill(25, 8)) > teaching_weight(Skill(25, 2),
                                                                         Skill(25, 2))
    skills = {"me": Skill(25, 2), "close": Skill(25.5, 2), "far": Skill(45, 2)}
    rng = random.Random(7)
    met = [choose_pair(["me", "close", "far"], skills, {"me": 0, "close": 5, "far": 5}, rng)
           for _ in range(200)]
    close = sum(p == ("me", "close") for p in met)
    far = sum(p == ("me", "far") for p in met)
    assert close > 4 * far


def test_a_gauntlet_plays_only_the_challengers_pairs() -> None:
    """`format = "gauntlet"` with `challenger`: every scheduled pairing has the challenger,
    against each other bot, every variant, `games` times; a round robin has every pair."""
    bots = [{"name": n, "token": n} for n in ("new", "x", "y", "z")]
    base = {"tournament": {"variants": ["mineiro-1v1", "argentine-1v1"], "games": 2},
            "bot": bots}
    gauntlet = parse_config({**base, "tournament": {**base["tournament"], "format": "gauntlet",
                                                    "challenger": "new"}})
    pairings = list(round_robin(gauntlet, bytes(32)))
    assert len(pairings) == 3 * 2 * 2 == schedule_size(gauntlet)
    assert all("new" in (p.teams[0].name, p.teams[1].name) for p in pairings)
    assert {p.teams[0].name for p in pairings} | {p.teams[1].name for p in pairings} == {
        "new", "x", "y", "z"}
    assert len(list(round_robin(parse_config(base), bytes(32)))) == 6 * 2 * 2


@pytest.mark.parametrize(("tournament", "message"), [
    ({"format": "swiss"}, "tournament.format: one of round-robin, gauntlet"),
    ({"format": "gauntlet"}, "tournament.challenger: a gauntlet needs the name"),
    ({"format": "gauntlet", "challenger": "nobody"}, "tournament.challenger"),
    ({"challenger": "x"}, "tournament.challenger: only for format"),
])
def test_a_bad_format_names_the_field(tournament: dict[str, Any], message: str) -> None:
    """A wrong tournament format or challenger is one line naming the field."""
    raw = {"tournament": tournament, "bot": [{"name": "x", "token": "x"},
                                             {"name": "y", "token": "y"}]}
    with pytest.raises(ConfigError) as caught:
        parse_config(raw)
    assert message in str(caught.value)


@pytest.mark.e2e
def test_ladder_and_sprt_commands_refuse_bad_input_in_one_line(tmp_path: Path) -> None:
    """The real CLI: `arena ladder add` with both a command and a token, `arena ladder show`
    of a database without that ladder, and `arena sprt` naming a bot the config lacks, each
    exit 2 with one error line naming the flag or field."""
    from test_e2e_support import arena, write_config

    config = write_config(tmp_path, name="t", bots={"x": ["python", "x.py"],
                                                    "y": ["python", "y.py"]})
    book = LadderBook(tmp_path / "arena.db")
    book.save_settings("main", {"k": 3})
    book.close()
    cases = [
        (("ladder", "add", "bot", "--command", "python b.py", "--token", "t", "--database",
          tmp_path / "arena.db"), "bot: give exactly one of command"),
        (("ladder", "show", "--database", tmp_path / "arena.db", "--ladder", "other"),
         "--ladder: no ladder 'other'"),
        (("sprt", config, "--a", "x", "--b", "nobody"), "--b: no bot 'nobody' in the config"),
        (("sprt", config, "--a", "x", "--b", "y", "--elo0", "10", "--elo1", "5"),
         "--elo0/--elo1/--alpha/--beta: elo0 (10.0) must be below elo1"),
        (("sprt", config, "--a", "x", "--b", "y", "--elo1", "inf"),  # a traceback before
         "--elo0/--elo1/--alpha/--beta: elo1 must be between -1000 and 1000, got inf"),
        (("sprt", config, "--a", "x", "--b", "y", "--elo0", "nan"),
         "--elo0/--elo1/--alpha/--beta: elo0 must be between -1000 and 1000, got nan"),
    ]
    for args, message in cases:
        run = arena(*args, cwd=tmp_path)
        assert run.returncode == 2, (args, run.stdout, run.stderr)
        assert message in run.stderr, (args, run.stderr)
        assert len(run.stderr.strip().splitlines()) == 1, run.stderr


def test_two_ladder_bots_cannot_share_a_token_and_a_short_one_is_warned(tmp_path: Path) -> None:
    """`arena ladder add` refuses a token another active entry of the ladder connects with
    (one connection would play both bots' seats: a hostile review, round 4, saw it with a
    copied config line), in one line naming that entry — another active version of the same
    bot included — and a retired entry frees it. A token shorter than 16 characters is
    entered with a warning that it can be guessed."""
    from test_e2e_support import arena

    book = LadderBook(tmp_path / "arena.db")
    book.save_settings("main", {"k": 3})
    book.close()
    db = ("--database", tmp_path / "arena.db")
    token = "same-token-0123456789"
    first = arena("ladder", "add", "alice", "--token", token, *db, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "warning" not in first.stderr
    twin = arena("ladder", "add", "bob", "--token", token, *db, cwd=tmp_path)
    assert twin.returncode == 2, twin.stderr
    assert "token: alice" in twin.stderr, twin.stderr
    assert "same token" in twin.stderr, twin.stderr
    assert len(twin.stderr.strip().splitlines()) == 1, twin.stderr
    version = arena("ladder", "add", "alice", "--version", "2", "--token", token, *db,
                    cwd=tmp_path)
    assert version.returncode == 2, version.stderr
    again = arena("ladder", "add", "alice", "--version", "2", "--token", "other-token-0123456",
                  *db, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    retired = arena("ladder", "retire", "alice", *db, cwd=tmp_path)
    assert retired.returncode == 0, retired.stderr
    freed = arena("ladder", "add", "bob", "--token", token, *db, cwd=tmp_path)
    assert freed.returncode == 0, freed.stderr
    short = arena("ladder", "add", "carol", "--token", "t", *db, cwd=tmp_path)
    assert short.returncode == 0, short.stderr
    assert "warning: --token: 1 characters" in short.stderr, short.stderr


@pytest.mark.e2e
@pytest.mark.parametrize(("args", "message"), [
    # hostile review round 5: an entrant's name that retitles and clears the organizer's
    # terminal, and one whose line break forged a row of `arena ladder show`
    (("evil\x1b]0;PWNED\x07\x1b[2J",), "bot.name: must be printable"),
    (("line1\nhonest\t0.0",), "bot.name: must be printable"),
    (("x" * 65,), "bot.name: at most 64 characters"),
    ((" padded",), "bot.name: no leading or trailing spaces"),
    (("ok", "--version", "1\x1b[5m"), "bot.version: must be printable"),
    (("ok", "--version", "v" * 65), "bot.version: at most 64 characters"),
])
def test_ladder_add_refuses_names_a_terminal_would_obey(
    tmp_path: Path, args: tuple[str, ...], message: str
) -> None:
    """`arena ladder add` holds a name (and a version) to a tournament's `[[bot]] name`
    rules: printable, at most 64 characters, no space at either end. Each bad one is one
    error line (exit 2) and nothing is entered."""
    from test_e2e_support import arena

    book = LadderBook(tmp_path / "arena.db")
    book.save_settings("main", {"k": 3})
    book.close()
    run = arena("ladder", "add", *args, "--token", "a-token-of-twenty-chars", "--database",
                tmp_path / "arena.db", cwd=tmp_path)
    assert run.returncode == 2, (run.stdout, run.stderr)
    assert message in run.stderr, run.stderr
    assert len(run.stderr.strip().splitlines()) == 1, run.stderr
    book = LadderBook(tmp_path / "arena.db")
    assert book.entries("main") == []
    book.close()


def test_a_command_argument_too_long_for_a_file_name_is_no_file(tmp_path: Path) -> None:
    """A bot's own folder is found from the first argument naming a file; an argument longer
    than a file name may be (`python -c CODE` with 300 bytes of code) is not a file, not an
    OSError (hostile review round 5: it killed `arena ladder serve` at every start), and a
    program name that long is a one-line ConfigError."""
    from arena.tournament.launcher import program_dir, resolve_command

    code = "import sys" + " " * 300
    assert program_dir(["python", "-c", code], tmp_path) == tmp_path.resolve()
    (tmp_path / "bot.py").write_text("", encoding="utf-8")
    assert program_dir(["python", "-c", code, "bot.py"], tmp_path) == tmp_path.resolve()
    with pytest.raises(ConfigError, match="does not exist"):
        resolve_command(("./" + "b" * 300,), tmp_path)


def test_folders_shared_by_bots_are_found_unless_both_name_them(tmp_path: Path) -> None:
    """`shared_folders`: bots whose own folders are one, or one inside the other's, pair by
    pair; a pair that both name their folder (`dir`, sharing on purpose) is left out;
    folders side by side are not shared."""
    from arena.tournament.launcher import shared_folders

    alice, data, bob = tmp_path / "alice", tmp_path / "alice" / "data", tmp_path / "bob"
    for folder in (alice, data, bob):
        folder.mkdir(parents=True, exist_ok=True)
    assert shared_folders({"alice": alice, "bob": bob}) == []
    assert shared_folders({"alice": alice, "carol": alice, "bob": bob}) == [
        ("alice", "carol", alice.resolve())]
    # inside: the inner bot reads that part of the outer one's folder (round 6), unless
    # the outer folder is only the config's folder it fell back to (not its own)
    assert shared_folders({"alice": alice, "inner": data}) == [("inner", "alice", data.resolve())]
    assert shared_folders({"inner": data, "alice": alice}) == [("inner", "alice", data.resolve())]
    assert shared_folders({"alice": alice, "inner": data}, owners=["inner"]) == []
    assert shared_folders({"alice": alice, "carol": alice}, explicit=["alice"]) != []
    assert shared_folders({"alice": alice, "carol": alice},
                          explicit=["alice", "carol"]) == []


@pytest.mark.e2e
def test_ladder_add_warns_of_a_bot_taking_another_bots_folder(tmp_path: Path) -> None:
    """`arena ladder add` enters a bot whose program lies in another active bot's folder
    (each would read the other's files) with a warning naming both; a bot in a folder of its
    own, a new version of a bot (one author), and a command that only names another bot's
    file as an argument (its folder is not taken: the program chooses) get none."""
    from test_e2e_support import arena

    for name in ("alice", "bob"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "bot.py").write_text("", encoding="utf-8")
    (tmp_path / "alice" / "other.py").write_text("", encoding="utf-8")
    book = LadderBook(tmp_path / "arena.db")
    book.save_settings("main", {"k": 3})
    book.close()
    db = ("--database", tmp_path / "arena.db")

    def add(*args: str) -> Any:
        run = arena("ladder", "add", *args, *db, cwd=tmp_path)
        assert run.returncode == 0, run.stderr
        return run

    assert "warning" not in add("alice", "--command", "python alice/bot.py").stderr
    assert "warning" not in add("bob", "--command", "python bob/bot.py").stderr
    assert "warning" not in add("alice", "--version", "2", "--command",
                                "python alice/bot.py").stderr
    assert "warning" not in add("peeker", "--command",
                                "python -c 'import runpy' alice/bot.py").stderr
    taken = add("mallory", "--command", "python alice/other.py").stderr
    assert "warning: mallory and alice run from one folder" in " ".join(taken.split())
    assert "bob" not in taken


@pytest.mark.e2e
def test_every_ladder_command_reports_a_bad_config_in_one_error_line(tmp_path: Path) -> None:
    """A ladder config that is missing, a folder, not UTF-8 or has a bad field is, for
    `arena ladder serve` and for `add`, `retire` and `show --config`, one `error:` line and
    exit 2, as a tournament's config is (an outside user saw click's multi-line
    `Error: Invalid value for '--config'` from `--config`, and a traceback for a folder or a
    file in Latin-1)."""
    from test_e2e_support import arena

    (tmp_path / "latin1.toml").write_bytes('[ladder]\nname = "espa\xf1a"\n'.encode("latin-1"))
    (tmp_path / "bad.toml").write_text('[ladder]\nname = "main"\n\n[[bot]]\nname = "a"\n'
                                       'command = "./a"\nspeed = 3\n', encoding="utf-8")
    configs = {"missing.toml": "config file missing.toml does not exist",
               ".": "config file . is a directory",
               "latin1.toml": "config file latin1.toml: not UTF-8 text",
               "bad.toml": "bot[0]: unknown field 'speed'"}
    commands = [("serve",), ("add", "x", "--token", "a-token-of-twenty-chars", "--config"),
                ("retire", "x", "--config"), ("show", "--config")]
    for args in commands:
        for config, message in configs.items():
            if args != ("serve",) and config not in ("missing.toml", "latin1.toml"):
                continue  # every command reads the config alike: two cases each suffice
            run = arena("ladder", *args, config, cwd=tmp_path)
            assert run.returncode == 2, (args, config, run.stderr)
            assert run.stderr.startswith(f"error: {message}"), (args, config, run.stderr)
            assert len(run.stderr.strip().splitlines()) == 1, (args, config, run.stderr)


@pytest.mark.e2e
def test_ladder_add_enters_a_stdio_bot_with_its_folder_and_variables(tmp_path: Path) -> None:
    """`arena ladder add --stdio --dir DIR --env K=V` (repeatable) enters what a config's
    `protocol = "stdio"`, `dir` and `env` would (DIR relative to the current folder), stored
    with the entry; each misuse is one error line naming the option or field, exit 2, and
    enters nothing."""
    from test_e2e_support import arena

    (tmp_path / "kit").mkdir()
    (tmp_path / "bot").write_text("#!/bin/sh\n", encoding="utf-8")  # add checks the command
    (tmp_path / "bot").chmod(0o755)
    book = LadderBook(tmp_path / "arena.db")
    book.save_settings("main", {"k": 3})
    book.close()
    db = ("--database", tmp_path / "arena.db")
    refused = [
        (("--stdio", "--token", "a-token-of-twenty-chars"),
         'bot.protocol: "stdio" is for bots the referee launches'),
        (("--command", "./bot", "--env", "SEED"), "--env: NAME=VALUE, got 'SEED'"),
        (("--command", "./bot", "--env", "=1"), "bot.env: a variable name cannot be empty"),
        (("--command", "./bot", "--dir", "nowhere"), "bot.dir: folder "),
        (("--token", "a-token-of-twenty-chars", "--dir", "kit"),
         "bot: dir and env are for bots with a command"),
    ]
    for args, message in refused:
        run = arena("ladder", "add", "c", *args, *db, cwd=tmp_path)
        assert run.returncode == 2, (args, run.stdout, run.stderr)
        assert run.stderr.startswith(f"error: {message}"), (args, run.stderr)
        assert len(run.stderr.strip().splitlines()) == 1, (args, run.stderr)
    run = arena("ladder", "add", "c", "--version", "1", "--stdio", "--command", "./bot",
                "--dir", "kit", "--env", "B=2", "--env", "A=x=y", *db, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    book = LadderBook(tmp_path / "arena.db")
    [entry] = book.entries("main")
    book.close()
    assert entry.bot.spec() == BotSpec(
        name="c@1", command=("./bot",), cwd=tmp_path, protocol="stdio", dir=tmp_path / "kit",
        env=(("A", "x=y"), ("B", "2")))


@pytest.mark.e2e
def test_ladder_add_says_whether_it_entered_updated_or_changed_nothing(tmp_path: Path) -> None:
    """`arena ladder add` of a version already entered says what happened (it said
    `entered NAME` every time): "updated NAME ...: command B (was A)" when the entry changed
    (what changed, a token never shown), "NAME is already entered ..., unchanged" when the
    same — also for a bot the config entered, added from the config's folder — and
    "re-entered" for a retired one."""
    from test_e2e_support import arena

    from arena.tournament.ladder import load_ladder_config

    config = tmp_path / "ladder.toml"
    config.write_text('[ladder]\nname = "main"\ndatabase = "arena.db"\n\n[[bot]]\n'
                      'name = "cfg"\ncommand = "python cfg.py"\n', encoding="utf-8")
    for script in ("cfg.py", "cfg2.py"):  # `ladder add` checks a command as a config's
        (tmp_path / script).write_text("print('a bot')\n", encoding="utf-8")
    (tmp_path / "x").write_text("#!/bin/sh\n", encoding="utf-8")
    (tmp_path / "x").chmod(0o755)
    book = LadderBook(tmp_path / "arena.db")
    for bot in load_ladder_config(config).bots:  # as `arena ladder serve` enters them
        book.enter("main", bot, revive=False)
    book.close()
    steps = [
        (("cfg", "--command", "python cfg.py"),
         "cfg is already entered in ladder main, unchanged"),
        (("cfg", "--command", "python cfg2.py"),
         "updated cfg in ladder main: command python cfg2.py (was python cfg.py)"),
        (("x", "--token", "first-token-0123456789"), "entered x in ladder main"),
        (("x", "--token", "first-token-0123456789"),
         "x is already entered in ladder main, unchanged"),
        (("x", "--token", "other-token-0123456789"), "updated x in ladder main: token changed"),
        (("x", "--command", "./x", "--stdio", "--env", "K=v"),
         "updated x in ladder main: command ./x (was none (remote, with a token)); "
         "protocol stdio (was grpc); env K=v (was none)"),
    ]
    for args, said in steps:
        run = arena("ladder", "add", *args, "--config", config, cwd=tmp_path)
        assert run.returncode == 0, (args, run.stderr)
        assert run.stdout.strip() == said, (args, run.stdout)
    assert arena("ladder", "retire", "x", "--config", config, cwd=tmp_path).returncode == 0
    again = arena("ladder", "add", "x", "--command", "./x", "--stdio", "--env", "K=v",
                  "--config", config, cwd=tmp_path)
    assert again.stdout.strip() == "re-entered x in ladder main (it was retired)", again.stdout
    book = LadderBook(tmp_path / "arena.db")
    commands = {e.bot.identity: e.bot.command for e in book.entries("main")}
    book.close()
    assert commands == {"cfg": ("python", "cfg2.py"), "x": ("./x",)}


def _store_ladder_match(database: Path, number: int, variant: str, bot0: str, bot1: str) -> None:
    """A finished ladder match of `main` (bot0 won), as the service stores it."""
    with closing(sqlite3.connect(database)) as db, db:
        db.execute("INSERT OR IGNORE INTO tournaments(name, config, started_at) "
                   "VALUES ('main', '{}', 0)")
        db.execute(
            "INSERT INTO matches(id, tournament, variant, options, seed, bot0, bot1, "
            "termination, winner_bot, points0, points1, games0, games1, strikes, decisions, "
            "started_at, finished_at, seat_bots) VALUES (?, 'main', ?, '{}', 1, ?, ?, "
            "'normal', 0, 12, 0, 1, 0, '[0, 0]', 10, 0, 0, ?)",
            (f"main:{number:07d}:{variant}:{bot0}-{bot1}:0", variant, bot0, bot1,
             json.dumps([bot0, bot1])))


@pytest.mark.e2e
def test_ladder_show_marks_retired_versions_and_shows_only_the_variants_asked(
    tmp_path: Path,
) -> None:
    """`arena ladder show` after `arena ladder retire`: the retired version is marked (a
    "retired" column in the table, `retired: true` in JSON, CSV and Markdown; the others
    false), the JSON keys stay the tables' titles with their "standings"; `--variant X`
    prints X's table only, without the "overall" one (it printed both)."""
    from test_e2e_support import arena

    database = tmp_path / "arena.db"
    book = LadderBook(database)
    book.save_settings("main", {"k": 3, "min_games": 1})
    for name, version in (("a", ""), ("b", "1"), ("b", "2")):
        book.enter("main", make_bot({"name": name, "version": version, "command": "./x"},
                                    tmp_path, where="bot"))
    book.close()
    _store_ladder_match(database, 1, "mineiro-1v1", "a", "b@1")
    _store_ladder_match(database, 2, "argentine-1v1", "b@2", "a")
    db = ("--database", database)
    assert arena("ladder", "retire", "b", "--version", "1", *db, cwd=tmp_path).returncode == 0

    run = arena("ladder", "show", *db, "--format", "json", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    tables = json.loads(run.stdout)
    assert list(tables) == ["ladder main: argentine-1v1", "ladder main: mineiro-1v1",
                            "ladder main: overall"]
    overall = {line["bot"]: line for line in tables["ladder main: overall"]["standings"]}
    assert {bot: line["retired"] for bot, line in overall.items()} == {
        "a": False, "b@1": True, "b@2": False}
    assert list(overall["a"]) == ["rank", "bot", "mu", "sigma", "conservative", "games", "won",
                                  "lost", "faults", "retired"]

    csv_text = arena("ladder", "show", *db, "--format", "csv", cwd=tmp_path).stdout
    assert "faults,retired" in csv_text
    assert ",b@1," in csv_text
    assert [line.endswith(",True") for line in csv_text.splitlines() if ",b@1," in line] == [
        True, True]
    markdown = arena("ladder", "show", *db, "--format", "markdown", cwd=tmp_path).stdout
    assert "| faults | retired |" in markdown
    assert [line.endswith("| True |") for line in markdown.splitlines() if "| b@1 |" in line] == [
        True, True]
    table = arena("ladder", "show", *db, cwd=tmp_path).stdout
    marked = [line for line in table.splitlines() if "b@" in line]
    assert marked
    assert all(line.rstrip(" │|").endswith("yes") == ("b@1" in line) for line in marked), table

    for fmt in ("json", "table"):
        only = arena("ladder", "show", *db, "--variant", "mineiro-1v1", "--format", fmt,
                     cwd=tmp_path)
        assert only.returncode == 0, only.stderr
        assert "ladder main: mineiro-1v1" in only.stdout
        assert "overall" not in only.stdout, only.stdout
        assert "argentine" not in only.stdout, only.stdout
    bare = arena("ladder", "--database", database, "--variant", "mineiro-1v1", "--format",
                 "json", cwd=tmp_path)
    assert list(json.loads(bare.stdout)) == ["ladder main: mineiro-1v1"], bare.stdout

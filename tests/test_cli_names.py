"""Names and small things a new user tripped on (issue 12): the config's matches per pair,
decimal options on the command line, `arena variants` listing the default first, a string
command split as a shell would, the resume hint after `--fresh`, a run id on every log line,
and `arena tournament` saying where remote bots connect."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import tomllib
from pathlib import Path

import pytest
from test_e2e_support import (
    ARENA,
    SAMPLE_BOTS,
    arena,
    bot_cmd,
    explain,
    python_bot,
    write_config,
)

from arena.cli import _option_value, option_choices, toml_value
from arena.errors import ConfigError
from arena.rules.variants import VARIANTS
from arena.tournament.config import load_config, parse_config

TWO_BOTS = {"random": python_bot(SAMPLE_BOTS / "random_bot.py"),
            "heuristic": python_bot(SAMPLE_BOTS / "heuristic_bot.py")}


def _raw(**tournament: object) -> dict[str, object]:
    return {"tournament": {"name": "t", **tournament},
            "bot": [{"name": "a", "command": ["python", "a.py"]},
                    {"name": "b", "command": ["python", "b.py"]}]}


def test_matches_per_pair_is_the_name_and_games_still_works_with_a_warning(
    tmp_path: Path,
) -> None:
    """`matches_per_pair` sets the matches per pair and variant; the old `games` still does,
    and `load_config` notes that it is the old name; giving both is refused naming the
    field."""
    assert parse_config(_raw(matches_per_pair=4)).games == 4
    assert parse_config(_raw(games=6)).games == 6
    path = tmp_path / "old.toml"
    path.write_text('[tournament]\nname = "t"\ngames = 3\n[[bot]]\nname = "a"\n'
                    'command = ["python", "a.py"]\n[[bot]]\nname = "b"\n'
                    'command = ["python", "b.py"]\n', encoding="utf-8")
    old = load_config(path)
    assert old.games == 3
    assert any("matches_per_pair" in note for note in old.notes)
    with pytest.raises(ConfigError, match=r"tournament\.games"):
        parse_config(_raw(games=2, matches_per_pair=2))


def test_a_string_command_is_split_as_a_shell_would() -> None:
    """`command = 'python "my bot.py" --level 3'` keeps the quoted path whole (str.split
    cut it in two)."""
    raw = _raw()
    raw["bot"] = [{"name": "a", "command": 'python "my bot.py" --level 3'},
                  {"name": "b", "command": ["python", "b.py"]}]
    assert parse_config(raw).bots[0].command == ("python", "my bot.py", "--level", "3")


def test_decimal_options_are_numbers_on_the_command_line(tmp_path: Path) -> None:
    """`--option leak=0.5` is the number 0.5 (a TOML config would say the same), so a leaky
    2v2 match with it plays through `arena match`."""
    assert _option_value("0.5") == 0.5
    assert _option_value("15") == 15
    assert _option_value("true") is True
    assert _option_value("leaky") == "leaky"
    run = arena("match", "argentine-2v2", f"python {SAMPLE_BOTS / 'random_bot.py'}",
                f"python {SAMPLE_BOTS / 'random_bot.py'}", "--option", "signals=leaky",
                "--option", "leak=0.5", "--option", "target=15", "--option", "chicos=1",
                "--database", tmp_path / "m.db", cwd=tmp_path)
    assert run.returncode == 0, explain(run)


def test_arena_variants_lists_each_options_default_first(tmp_path: Path) -> None:
    """Every option's values, as `arena variants` lists them, start with its default (the
    table's heading says "default first"; it listed them in declaration order), every option
    is in the table, and each value is written as the config file takes it (TOML: `false`,
    `"team"`; it printed Python's `False`, which a config refuses)."""
    for variant in VARIANTS.values():
        for spec in variant.option_specs:
            listed = option_choices(spec)
            assert listed[0] == spec.default
            assert sorted(map(str, listed)) == sorted(map(str, spec.choices))
            for value in listed:
                assert tomllib.loads(f"x = {toml_value(value)}")["x"] == value
    assert any(spec.choices[0] != spec.default
               for v in VARIANTS.values() for spec in v.option_specs), "nothing to reorder"
    run = arena("variants", cwd=tmp_path)
    assert run.returncode == 0, explain(run)
    assert "default first" in run.stdout
    for spec in next(iter(VARIANTS.values())).option_specs:
        assert spec.name in run.stdout
    assert "flor: false, true" in run.stdout


def test_every_log_line_names_its_run(tmp_path: Path) -> None:
    """Two runs of one tournament append to one log file; each line carries the run id of
    the process that wrote it, so the two runs can be told apart."""
    path = write_config(tmp_path, name="runs", bots=TWO_BOTS, variants=["argentine-1v1"],
                        options={"argentine-1v1": {"target": 15, "chicos": 1}})
    for _ in range(2):
        run = arena("tournament", path, "--no-progress", cwd=tmp_path)
        assert run.returncode == 0, explain(run)
    lines = [json.loads(line) for line in (tmp_path / "logs" / "runs.jsonl").read_text(
        encoding="utf-8").splitlines()]
    starts = [line["run_id"] for line in lines if line["event"] == "tournament_start"]
    assert len(starts) == 2
    assert starts[0] != starts[1]
    assert all(len(line["run_id"]) == 12 for line in lines)


def test_a_tournament_with_a_remote_bot_says_where_it_listens_and_how_to_resume(
    tmp_path: Path,
) -> None:
    """`arena tournament` with a remote bot prints the address it listens on at once (so the
    remote bot can be pointed at it); interrupted after `--fresh`, its hint says to run the
    command again WITHOUT --fresh (which would forget the saved matches)."""
    path = write_config(tmp_path, name="remote", bots=TWO_BOTS, variants=["argentine-1v1"])
    text = path.read_text(encoding="utf-8")
    text += '\n[[bot]]\nname = "visitor"\ntoken = "tok"\n'
    path.write_text(text, encoding="utf-8")
    process = subprocess.Popen(
        [str(ARENA), "tournament", str(path), "--fresh", "--no-progress"], cwd=tmp_path,
        stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        # faulthandler: SIGABRT makes the process print every thread's stack (see below)
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONFAULTHANDLER": "1"},
    )
    try:
        assert process.stderr is not None
        deadline = time.monotonic() + 60
        seen = ""
        while time.monotonic() < deadline:
            line = process.stderr.readline()
            seen += line
            if "listening on" in line:
                break
        assert "referee listening on 127.0.0.1:" in seen, seen
        process.send_signal(signal.SIGINT)
        try:
            _out, rest = process.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            # It did not stop (seen once, at load ~30): say where it was stuck.
            process.send_signal(signal.SIGABRT)
            _out, rest = process.communicate(timeout=30)
            pytest.fail(f"still running 60 s after Ctrl-C; its stacks:\n{seen}{rest[-8000:]}")
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()  # reap it and close its pipes
    flat = " ".join((seen + rest).split())
    assert "without --fresh" in flat, flat
    assert process.returncode == 130, flat


def test_names_that_look_like_markup_are_printed_as_written(tmp_path: Path) -> None:
    """A tournament named `t[/]`, bots named `a[red]` and `v[/]` (remote, never connects,
    forfeits) and a replays folder `re[bold]plays`: the run prints the presence line, the
    standings, its last line and, resumed, its first line with the names as written (rich
    read the tournament's name in a table title as markup: a MarkupError traceback after
    every match was played)."""
    path = write_config(tmp_path, name="t", bots={"a[red]": bot_cmd("first_legal"),
                                                   "b": bot_cmd("first_legal")},
                        variants=["argentine-1v1"], fixed_secret=False)
    text = path.read_text(encoding="utf-8").replace('name = "t"', 'name = "t[/]"', 1)
    text = text.replace("[faults]\n", "[faults]\nno_show_ms = 200\n", 1)
    text = text.replace('replays = "replays"', 'replays = "re[bold]plays"', 1)
    path.write_text(text + '\n[[bot]]\nname = "v[/]"\ntoken = "tok12345"\n',
                    encoding="utf-8")
    run = arena("tournament", path, "--no-progress", cwd=tmp_path)
    assert run.returncode == 0, explain(run)
    shown = " ".join((run.stdout + run.stderr).split())
    for words in ("missing: v[/]", "t[/]: argentine-1v1", "a[red]", "v[/]",
                  "replays in " + str(tmp_path / "re[bold]plays")):
        assert words in shown, (words, explain(run))
    again = arena("tournament", path, "--no-progress", "--games", "2", cwd=tmp_path)
    assert again.returncode == 0, explain(again)
    assert "resuming t[/]: 3 matches already stored, 3 to play" in again.stderr, explain(again)


@pytest.mark.parametrize(("command", "name"), [
    ("python bots/thinker.py 12", "thinker"),  # not "12": arguments after the program
    ("java -jar build/bot.jar --level 3", "bot"),
    ("node sample.js", "sample"),
    ("./mybot --level 3", "mybot"),
    ("mc=python bots/mc.py 12", "mc"),  # a name given wins
])
def test_a_command_line_bot_is_named_after_its_program(command: str, name: str) -> None:
    """`arena match A B` names a bot after its program file, not its last argument (a bot
    run as `python thinker.py 12` was called "12" in the results)."""
    from arena.cli import _bot_arg

    assert _bot_arg(command, 0, Path(".")).name == name
